{{/* Names and labels. */}}
{{- define "fluss-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "fluss-gateway.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fluss-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "fluss-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "fluss-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "fluss-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: gateway
{{- end -}}

{{- define "fluss-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "fluss-gateway.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "fluss-gateway.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* Mount points inside the container. */}}
{{- define "fluss-gateway.configDir" -}}/etc/fluss-gateway/config{{- end -}}
{{- define "fluss-gateway.tlsDir" -}}/etc/fluss-gateway/tls{{- end -}}
{{- define "fluss-gateway.clientCADir" -}}/etc/fluss-gateway/client-ca{{- end -}}
{{- define "fluss-gateway.jwksDir" -}}/etc/fluss-gateway/jwks{{- end -}}

{{/*
fluss-gateway.seconds: a gateway duration (<integer><ms|s|m|h|d>, or 0) as
whole seconds, rounded up.
*/}}
{{- define "fluss-gateway.seconds" -}}
{{- $s := toString . | trim | lower -}}
{{- if not (regexMatch "^[0-9]+(ms|s|m|h|d)?$" $s) -}}
{{- fail (printf "fluss-gateway: %q is not a gateway duration (<integer><ms|s|m|h|d>)" $s) -}}
{{- end -}}
{{- $n := regexFind "^[0-9]+" $s | int64 -}}
{{- $u := regexReplaceAll "^[0-9]+" $s "" -}}
{{- if eq $u "ms" -}}{{ div (add $n 999) 1000 }}
{{- else if eq $u "m" -}}{{ mul $n 60 }}
{{- else if eq $u "h" -}}{{ mul $n 3600 }}
{{- else if eq $u "d" -}}{{ mul $n 86400 }}
{{- else -}}{{ $n }}
{{- end -}}
{{- end -}}

{{/* The effective shutdown timings, in seconds. */}}
{{- define "fluss-gateway.readinessGraceSeconds" -}}
{{- include "fluss-gateway.seconds" (index .Values.config "gateway.shutdown.readiness-grace" | default "2s") -}}
{{- end -}}
{{- define "fluss-gateway.drainSeconds" -}}
{{- include "fluss-gateway.seconds" (index .Values.config "gateway.shutdown.drain-timeout" | default "30s") -}}
{{- end -}}
{{- define "fluss-gateway.preStopSeconds" -}}
{{- if kindIs "invalid" .Values.shutdown.preStopSleepSeconds -}}
{{- include "fluss-gateway.readinessGraceSeconds" . -}}
{{- else -}}
{{- .Values.shutdown.preStopSleepSeconds | int64 -}}
{{- end -}}
{{- end -}}
{{- define "fluss-gateway.terminationGraceSeconds" -}}
{{- $stopMargin := 5 -}}
{{- add (include "fluss-gateway.preStopSeconds" . | int64) (include "fluss-gateway.readinessGraceSeconds" . | int64) (include "fluss-gateway.drainSeconds" . | int64) $stopMargin (.Values.shutdown.extraGraceSeconds | int64) -}}
{{- end -}}

{{/* fluss-gateway.envName: the FLUSS_GATEWAY__... variable of a gateway.* key. */}}
{{- define "fluss-gateway.envName" -}}
{{- printf "FLUSS_GATEWAY__%s" (trimPrefix "gateway." . | replace "-" "_" | upper | replace "." "__") -}}
{{- end -}}

{{/* Keys that carry credentials and must come from secretConfig. */}}
{{- define "fluss-gateway.isSecretKey" -}}
{{- if or (eq . "gateway.security.users") (eq . "gateway.security.tokens") (hasSuffix ".connection.service.secret" .) -}}true{{- end -}}
{{- end -}}

{{/* The client certificate policy in effect. */}}
{{- define "fluss-gateway.clientAuth" -}}
{{- index .Values.config "gateway.rest.tls.client-auth" | default "none" -}}
{{- end -}}

{{/*
fluss-gateway.config: the gateway's YAML file: the config values, checked,
plus the keys the chart owns (listeners, mounted TLS and JWKS files), one
flat key per line in key order.
*/}}
{{- define "fluss-gateway.config" -}}
{{- $cfg := dict -}}
{{- range $k, $v := .Values.config -}}
{{- if not (hasPrefix "gateway." $k) -}}
{{- fail (printf "fluss-gateway: config key %q does not start with gateway." $k) -}}
{{- end -}}
{{- if include "fluss-gateway.isSecretKey" $k -}}
{{- fail (printf "fluss-gateway: %s is a credential: set it in secretConfig, not config" $k) -}}
{{- end -}}
{{- if or (eq $k "gateway.rest.listen") (eq $k "gateway.metrics.exporter.prometheus.listen") -}}
{{- fail (printf "fluss-gateway: %s is set by the chart from service.port and service.metricsPort" $k) -}}
{{- end -}}
{{- if hasKey $.Values.secretConfig $k -}}
{{- fail (printf "fluss-gateway: %s is in both config and secretConfig" $k) -}}
{{- end -}}
{{- if not (kindIs "invalid" $v) -}}
{{- $_ := set $cfg $k $v -}}
{{- end -}}
{{- end -}}
{{- if and (not (hasKey $cfg "gateway.clusters")) (not (hasKey $cfg "gateway.cluster.default.bootstrap.servers")) .Values.defaultCluster.bootstrapServers -}}
{{- $_ := set $cfg "gateway.cluster.default.bootstrap.servers" .Values.defaultCluster.bootstrapServers -}}
{{- end -}}
{{- if and (eq (get $cfg "gateway.security.authentication" | default "trust") "trust") (not (hasKey $cfg "gateway.security.trust.allow-non-loopback")) -}}
{{- $_ := set $cfg "gateway.security.trust.allow-non-loopback" .Values.trustAllowNonLoopback -}}
{{- end -}}
{{- $_ := set $cfg "gateway.rest.listen" (printf "0.0.0.0:%d" (.Values.service.port | int)) -}}
{{- $_ := set $cfg "gateway.metrics.exporter.prometheus.listen" (printf "0.0.0.0:%d" (.Values.service.metricsPort | int)) -}}
{{- if .Values.tls.enabled -}}
{{- $_ := set $cfg "gateway.rest.tls.cert-file" (printf "%s/tls.crt" (include "fluss-gateway.tlsDir" .)) -}}
{{- $_ := set $cfg "gateway.rest.tls.key-file" (printf "%s/tls.key" (include "fluss-gateway.tlsDir" .)) -}}
{{- if or .Values.tls.clientCA.existingSecret .Values.tls.clientCA.value -}}
{{- $_ := set $cfg "gateway.rest.tls.client-ca-file" (printf "%s/%s" (include "fluss-gateway.clientCADir" .) .Values.tls.clientCA.key) -}}
{{- end -}}
{{- else if or (hasKey .Values.config "gateway.rest.tls.cert-file") (hasKey .Values.config "gateway.rest.tls.key-file") -}}
{{- fail "fluss-gateway: set tls.enabled and tls.existingSecret (or tls.cert/tls.key) instead of gateway.rest.tls.cert-file/key-file" -}}
{{- end -}}
{{- if .Values.jwks.enabled -}}
{{- $_ := set $cfg "gateway.security.jwt.jwks-file" (printf "%s/%s" (include "fluss-gateway.jwksDir" .) .Values.jwks.key) -}}
{{- end -}}
{{- range $k := keys $cfg | sortAlpha }}
{{- $v := index $cfg $k }}
{{ $k }}: {{ if kindIs "slice" $v }}{{ join "," $v | toJson }}{{ else if kindIs "float64" $v }}{{ if eq $v (floor $v) }}{{ $v | int64 }}{{ else }}{{ $v }}{{ end }}{{ else if kindIs "bool" $v }}{{ $v }}{{ else if kindIs "int64" $v }}{{ $v }}{{ else if kindIs "int" $v }}{{ $v }}{{ else }}{{ toString $v | toJson }}{{ end }}
{{- end }}
{{- end -}}

{{/* Name of the Secret the chart creates for inline values. */}}
{{- define "fluss-gateway.secretName" -}}{{ include "fluss-gateway.fullname" . }}{{- end -}}
{{- define "fluss-gateway.tlsSecretName" -}}
{{- .Values.tls.existingSecret | default (printf "%s-tls" (include "fluss-gateway.fullname" .)) -}}
{{- end -}}

{{/* Whether the chart's own Secret has any key. */}}
{{- define "fluss-gateway.hasOwnSecret" -}}
{{- $own := false -}}
{{- range $k, $s := .Values.secretConfig -}}{{- if not $s.existingSecret -}}{{- $own = true -}}{{- end -}}{{- end -}}
{{- if and .Values.tls.enabled .Values.tls.clientCA.value (not .Values.tls.clientCA.existingSecret) -}}{{- $own = true -}}{{- end -}}
{{- if and .Values.jwks.enabled (not .Values.jwks.existingSecret) -}}{{- $own = true -}}{{- end -}}
{{- if $own -}}true{{- end -}}
{{- end -}}

{{/* secretKey: the key of a secretConfig entry inside the chart's Secret. */}}
{{- define "fluss-gateway.ownSecretKey" -}}
{{- trimPrefix "gateway." . | replace "." "_" -}}
{{- end -}}
