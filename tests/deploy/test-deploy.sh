#!/usr/bin/env bash
# make test-deploy: checks every deployment artefact without a Kubernetes
# cluster or a container engine.
#
#   bash tests/deploy/test-deploy.sh [--no-cluster] [--no-image] [--no-browser]
#
#  1. Helm chart deployments/helm/fluss-gateway: `helm lint --strict` and
#     `helm template` for the default values and every ci/*.yaml value set;
#     each rendered manifest validated with kubeconform (strict) against the
#     Kubernetes JSON schemas of the oldest supported (1.30) and a current
#     (1.37) release, the Prometheus Operator kinds against their CRD schemas;
#     the chart's refusals (credentials in config, client-auth require) fail
#     as they should; the rendered ConfigMap + environment of every value set
#     is accepted by the real gateway binary (--print-config; go test -tags
#     deploy -run TestRenderedChartConfig).
#  2. systemd unit: `systemd-analyze verify` clean (no output, exit 0), and
#     the offline `systemd-analyze security` exposure score.
#  3. GET /docs in headless Chromium (tests/deploy/docs-chromium.sh).
#  4. tools/image's unit tests; `make image` twice (the second time with an
#     empty Go build cache):
#     both archives must be byte-identical; then the image smoke test
#     (tests/deploy/image-smoke.sh) against a real Fluss cluster.
#  5. The Grafana dashboard's PromQL against a real gateway's scrape
#     (TestDashboardQueriesExportedMetrics).
# 4's smoke test and 5 need a Fluss cluster: FLUSS_BOOTSTRAP if set, else
# the local one from deployments/local/fluss-cluster.sh, started and stopped
# here (its FLUSS_* port variables apply).
#
# Offline: helm and kubeconform are built from the Go module proxy
# (`go install`, pinned below) into $DEPLOY_TOOLS_DIR; kubeconform never
# downloads schemas: the Kubernetes JSON schemas come from the PyPI package
# kubernetes-validate (which ships them, generated from each release's
# OpenAPI document), the ServiceMonitor/PodMonitor schemas from the CRD
# manifests in the Prometheus Operator Go module, converted by
# tests/deploy/crdschema. Both are cached in $DEPLOY_TOOLS_DIR.
set -euo pipefail

HELM_VERSION=v3.22.0
KUBECONFORM_VERSION=v0.8.0
K8S_SCHEMA_PACKAGE=kubernetes-validate==1.37.0
K8S_VERSIONS=(1.30.0 1.37.0)
PROM_OPERATOR_VERSION=v0.85.0

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
source tests/deploy/lib.sh
chart=deployments/helm/fluss-gateway
tools=${DEPLOY_TOOLS_DIR:-$HOME/.cache/fluss-gateway-go/deploy-tools}
out=${DEPLOY_OUT_DIR:-$root/bin/deploy}
with_cluster=1 with_image=1 with_browser=1
for arg in "$@"; do
	case $arg in
	--no-cluster) with_cluster=0 ;;
	--no-image) with_image=0 ;;
	--no-browser) with_browser=0 ;;
	*) echo "test-deploy: unknown argument $arg" >&2; exit 2 ;;
	esac
done

passed=0 failed=0 skipped=0
started_cluster=0
say() { printf 'test-deploy: %s\n' "$*"; }
ok() { passed=$((passed + 1)); say "ok   $*"; }
fail() { failed=$((failed + 1)); say "FAIL $*"; }
skip() { skipped=$((skipped + 1)); say "SKIP $*"; }
cleanup() {
	if ((started_cluster)); then
		bash deployments/local/fluss-cluster.sh stop >/dev/null 2>&1 || true
	fi
}
trap cleanup EXIT
t0=$SECONDS

# --- tools -------------------------------------------------------------------
mkdir -p "$tools/bin" "$out"
export GOWORK=off
install_tool() { # name version package
	local stamp=$tools/bin/$1.version
	if [[ -x $tools/bin/$1 && $(cat "$stamp" 2>/dev/null) == "$2" ]]; then return 0; fi
	say "building $1 $2 from the Go module proxy"
	(cd "$tools" && GOBIN=$tools/bin GOFLAGS=-trimpath go install "$3@$2")
	echo "$2" >"$stamp"
}
install_tool helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm
install_tool kubeconform "$KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform
helm=$tools/bin/helm kubeconform=$tools/bin/kubeconform

schemas=$tools/schemas
k8s_stamp=$schemas/kubernetes.version
if [[ $(cat "$k8s_stamp" 2>/dev/null) != "$K8S_SCHEMA_PACKAGE ${K8S_VERSIONS[*]}" ]]; then
	say "fetching the Kubernetes JSON schemas ($K8S_SCHEMA_PACKAGE)"
	rm -rf "$schemas/kubernetes" "$schemas/wheel" && mkdir -p "$schemas/wheel"
	python3 -m pip download -q --no-deps "$K8S_SCHEMA_PACKAGE" -d "$schemas/wheel"
	python3 - "$schemas/wheel" "$schemas/kubernetes" "${K8S_VERSIONS[@]}" <<'PY'
# Extract one strict schema directory per Kubernetes version, laid out as
# kubeconform's {{ .NormalizedKubernetesVersion }}-standalone-strict/
# {{ .ResourceKind }}{{ .KindSuffix }}.json. The package's schemas share one
# _definitions.json through absolute $refs under https://kubernetes.io/api/;
# they are made relative (and the $id dropped) so they resolve to the file
# next to them instead of the network.
import glob, json, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
dest = sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for version in sys.argv[3:]:
        prefix = f"kubernetes_validate/kubernetes-json-schema/v{version}-local-strict/"
        target = os.path.join(dest, f"v{version}-standalone-strict")
        os.makedirs(target, exist_ok=True)
        names = [n for n in z.namelist() if n.startswith(prefix) and n.endswith(".json")]
        if not names:
            sys.exit(f"no schemas for Kubernetes {version} in {wheel}")
        for n in names:
            text = z.read(n).decode().replace('"/api/_definitions.json#', '"_definitions.json#')
            doc = json.loads(text)
            doc.pop("$id", None)
            with open(os.path.join(target, os.path.basename(n)), "w") as f:
                json.dump(doc, f)
PY
	echo "$K8S_SCHEMA_PACKAGE ${K8S_VERSIONS[*]}" >"$k8s_stamp"
fi
crd_stamp=$schemas/crds.version
if [[ $(cat "$crd_stamp" 2>/dev/null) != "$PROM_OPERATOR_VERSION" ]]; then
	say "converting the Prometheus Operator CRDs ($PROM_OPERATOR_VERSION)"
	dir=$(go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROM_OPERATOR_VERSION" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
	rm -rf "$schemas/crds"
	go run ./tests/deploy/crdschema -out "$schemas/crds" \
		"$dir/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml" \
		"$dir/example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml"
	echo "$PROM_OPERATOR_VERSION" >"$crd_stamp"
fi
kubeconform_args=(-strict -summary
	-schema-location "$schemas/kubernetes/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json"
	-schema-location "$schemas/crds/{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json")
say "tools ready ($((SECONDS - t0)) s)"

# --- 1. Helm chart -------------------------------------------------------------
rendered=$out/rendered
rm -rf "$rendered" && mkdir -p "$rendered"
sets=(default)
for f in "$chart"/ci/*.yaml; do sets+=("$(basename "$f" .yaml)"); done
kube=${K8S_VERSIONS[-1]}
for set in "${sets[@]}"; do
	values=()
	[[ $set != default ]] && values=(-f "$chart/ci/$set.yaml")
	if "$helm" lint --strict --kube-version "$kube" "${values[@]}" "$chart" >"$out/lint-$set.log" 2>&1; then
		ok "helm lint $set"
	else
		fail "helm lint $set"; cat "$out/lint-$set.log"
	fi
	if "$helm" template fluss-gateway "$chart" --namespace data --kube-version "$kube" "${values[@]}" >"$rendered/$set.yaml" 2>"$out/template-$set.log"; then
		ok "helm template $set ($(grep -c '^kind:' "$rendered/$set.yaml") manifests: $(grep '^kind:' "$rendered/$set.yaml" | cut -d' ' -f2 | sort | tr '\n' ' '))"
	else
		fail "helm template $set"; cat "$out/template-$set.log"
	fi
done
# The README's and the chart README's `helm template` lines work as written
# (with our helm: a helm built by `go install` defaults to Kubernetes 1.20,
# below the chart's kubeVersion, hence the lines' --kube-version).
for doc in README.md "$chart/README.md"; do
	while IFS= read -r line; do
		cmd=${line#"${line%%helm template*}"}
		if (cd "$root" && eval "\"\$helm\" ${cmd#helm }") >"$out/readme-template.log" 2>&1; then
			ok "$doc: $cmd"
		else
			fail "$doc: $cmd"; cat "$out/readme-template.log"
		fi
	done < <(grep -E '^ +helm template ' "$root/$doc")
done
# The image `make image` builds is the chart's default image.
img_version=$(PRINT_VERSION=1 bash "$root/tools/image/build.sh")
app_version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$chart/Chart.yaml")
default_tag=$(sed -n '/^image:/,/^[^ ]/s/^  tag: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$chart/values.yaml")
if [[ $img_version == "$app_version" && -z $default_tag ]] && grep -q "image: \"fluss-gateway:$app_version\"" "$rendered/default.yaml"; then
	ok "make image builds fluss-gateway:$img_version, the chart's appVersion and default image"
else
	fail "make image version $img_version, chart appVersion $app_version, default image.tag '$default_tag': $(grep -m1 'image:' "$rendered/default.yaml")"
fi
for v in "${K8S_VERSIONS[@]}"; do
	if "$kubeconform" "${kubeconform_args[@]}" -kubernetes-version "$v" "$rendered" >"$out/kubeconform-$v.log" 2>&1 &&
		! grep -q 'Skipped: [1-9]' "$out/kubeconform-$v.log"; then
		ok "kubeconform Kubernetes $v: $(tail -1 "$out/kubeconform-$v.log")"
	else
		fail "kubeconform Kubernetes $v"; cat "$out/kubeconform-$v.log"
	fi
done
# The schemas must catch a misspelt field, in a built-in kind and a CRD kind.
mkdir -p "$out/negative"
sed '0,/imagePullPolicy:/s//imagePullPolicyy:/' "$rendered/default.yaml" >"$out/negative/typo.yaml"
sed -n '/^kind: ServiceMonitor/,/^---/p' "$rendered/jwt-values.yaml" | grep -q . ||
	{ fail "jwt-values renders no ServiceMonitor"; }
{ echo "apiVersion: monitoring.coreos.com/v1"; sed -n '/^kind: ServiceMonitor/,/^---/p' "$rendered/jwt-values.yaml" | sed '/^---/d; s/scrapeTimeout:/scrapeTimeoutt:/'; } >"$out/negative/crd-typo.yaml"
for f in typo crd-typo; do
	if "$kubeconform" "${kubeconform_args[@]}" -kubernetes-version "$kube" "$out/negative/$f.yaml" >"$out/negative/$f.log" 2>&1; then
		fail "kubeconform accepted a misspelt field ($f)"; cat "$out/negative/$f.log"
	else
		ok "kubeconform rejects a misspelt field ($f): $(grep -o "additional properties '[^']*' not allowed" "$out/negative/$f.log" | head -1)"
	fi
done
refuse() { # description, expected message, helm args...
	local what=$1 want=$2
	shift 2
	if "$helm" template x "$chart" --kube-version "$kube" "$@" >/dev/null 2>"$out/refuse.log"; then
		fail "chart accepted $what"
	elif grep -q "$want" "$out/refuse.log"; then
		ok "chart refuses $what"
	else
		fail "chart refused $what with an unexpected message"; cat "$out/refuse.log"
	fi
}
refuse "a credential in config" "is a credential: set it in secretConfig" --set-string 'config.gateway\.security\.users=a:b'
refuse "client-auth require (kubelet probes have no certificate)" "client-auth require fails" \
	--set tls.enabled=true --set tls.existingSecret=x --set-string 'config.gateway\.rest\.tls\.client-auth=require'
refuse "a listener in config" "is set by the chart" --set-string 'config.gateway\.rest\.listen=0.0.0.0:1'
refuse "a key that is not gateway.* (values.schema.json)" "does not match pattern '^gateway" --set-string 'config.rest\.listen=x'
refuse "a key that is not gateway.* (template)" "does not start with gateway." --skip-schema-validation --set-string 'config.rest\.listen=x'
refuse "an unknown value (values.schema.json)" "additional properties 'replicas' not allowed" --set replicas=3

# Checksum annotations: a changed configuration or credential changes the
# pod template (and so rolls the pods); the same values give the same one.
sums() { "$helm" template fluss-gateway "$chart" --kube-version "$kube" "$@" | grep -o 'checksum/[a-z-]*: [0-9a-f]*' | sort | tr '\n' ' '; }
base=$(sums) again=$(sums)
cfg=$(sums --set-string 'config.gateway\.shutdown\.drain-timeout=45s')
sec=$(sums --set-string 'secretConfig.gateway\.security\.users.value=a:b')
sec2=$(sums --set-string 'secretConfig.gateway\.security\.users.value=a:c')
if [[ $base == "$again" && $(grep -o 'checksum/config: [0-9a-f]*' <<<"$base") != $(grep -o 'checksum/config: [0-9a-f]*' <<<"$cfg") &&
	$(grep -o 'checksum/secret: [0-9a-f]*' <<<"$sec") != $(grep -o 'checksum/secret: [0-9a-f]*' <<<"$sec2") ]]; then
	ok "checksum annotations follow the ConfigMap and the chart's Secret"
else
	fail "checksum annotations: base [$base] config [$cfg] secret [$sec] / [$sec2]"
fi

gateway_bin=$out/fluss-gateway
go build -o "$gateway_bin" ./bootstrap/cmd/gateway
if RENDERED_DIR=$rendered GATEWAY_BIN=$gateway_bin go test -count=1 -tags deploy -run 'TestRenderedChartConfig|TestPromQLMetricNames' -v ./tests/deploy/ >"$out/rendered-test.log" 2>&1; then
	ok "the gateway accepts the rendered configuration of ${#sets[@]} value sets: $(grep -c 'accepted;' "$out/rendered-test.log") accepted"
else
	fail "rendered configurations"; cat "$out/rendered-test.log"
fi
grep -h 'accepted;' "$out/rendered-test.log" | sed 's/^ */test-deploy:      /' || true

# --- 2. systemd ------------------------------------------------------------------
unit=deployments/systemd/fluss-gateway.service
if ensure_apt_tool systemd-analyze systemd; then
	# verify checks that ExecStart's binary exists: point it at the one just built.
	mkdir -p "$out/systemd"
	sed "s|^ExecStart=/usr/local/bin/fluss-gateway|ExecStart=$gateway_bin|" "$unit" >"$out/systemd/fluss-gateway.service"
	if systemd-analyze verify "$out/systemd/fluss-gateway.service" >"$out/systemd/verify.log" 2>&1 && [[ ! -s $out/systemd/verify.log ]]; then
		ok "systemd-analyze verify $unit: clean"
	else
		fail "systemd-analyze verify $unit"; cat "$out/systemd/verify.log"
	fi
	if systemd-analyze security --offline=true "$out/systemd/fluss-gateway.service" >"$out/systemd/security.log" 2>&1; then
		say "     $(grep -o 'Overall exposure level.*' "$out/systemd/security.log")"
	fi
else
	skip "systemd-analyze is not available"
fi

# --- 3. /docs in headless Chromium ------------------------------------------------
if ((with_browser)); then
	if DOCS_SCREENSHOT=$out/docs-screenshot.png bash tests/deploy/docs-chromium.sh "$gateway_bin" >"$out/docs.log" 2>&1; then
		ok "/docs in headless Chromium: $(grep -o '[0-9]* operations in the document, [0-9]* shown' "$out/docs.log"), screenshot $out/docs-screenshot.png"
	else
		fail "/docs in headless Chromium"; cat "$out/docs.log"
	fi
else
	skip "/docs in headless Chromium (--no-browser)"
fi

# --- cluster for 4 and 5 ------------------------------------------------------------
if ((with_cluster)) && [[ -z ${FLUSS_BOOTSTRAP:-} ]]; then
	say "starting the local Fluss cluster"
	if cluster_out=$(bash deployments/local/fluss-cluster.sh start); then
		started_cluster=1
		FLUSS_BOOTSTRAP=$(sed -n 's/^FLUSS_BOOTSTRAP=//p' <<<"$cluster_out")
		export FLUSS_BOOTSTRAP
	else
		fail "local Fluss cluster did not start"; with_cluster=0
	fi
fi

# --- 4. image ---------------------------------------------------------------------
if ((with_image)); then
	if (cd tools/image && GOWORK=off go test -count=1 ./...) >"$out/image-unit.log" 2>&1; then
		ok "tools/image unit tests"
	else
		fail "tools/image unit tests"; cat "$out/image-unit.log"
	fi
	if bash tools/image/build.sh >"$out/image-1.log" 2>&1; then
		archive=$(sed -n 's/^image: \(bin\/[^ ]*\.tar\) .*/\1/p' "$out/image-1.log")
		sum1=$(sha256sum "$archive" | cut -d' ' -f1) digest1=$(cat "$archive.digest")
		cp "$archive" "$out/image-first.tar"
		# Second build from an empty Go build cache: the binary is compiled
		# again from scratch and the image assembled again.
		gocache=$(mktemp -d)
		if GOCACHE=$gocache bash tools/image/build.sh >"$out/image-2.log" 2>&1; then
			sum2=$(sha256sum "$archive" | cut -d' ' -f1) digest2=$(cat "$archive.digest")
			if [[ $sum1 == "$sum2" && $digest1 == "$digest2" ]]; then
				ok "make image is reproducible: $archive $(stat -c %s "$archive") bytes, manifest $digest1 (twice, second with a cold build cache)"
			else
				fail "make image differs between builds: $digest1 / $digest2, archive $sum1 / $sum2"
			fi
		else
			fail "second make image"; cat "$out/image-2.log"
		fi
		rm -rf "$gocache"
		if ((with_cluster)); then
			if bash tests/deploy/image-smoke.sh "$archive" >"$out/image-smoke.log" 2>&1; then
				ok "image smoke test: $(tail -1 "$out/image-smoke.log" | sed 's/^image-smoke: //')"
			else
				fail "image smoke test"; cat "$out/image-smoke.log"
			fi
		else
			skip "image smoke test (no cluster)"
		fi
	else
		fail "make image"; cat "$out/image-1.log"
	fi
else
	skip "make image (--no-image)"
fi

# --- 5. dashboard -------------------------------------------------------------------
if ((with_cluster)); then
	if GATEWAY_BIN=$gateway_bin go test -count=1 -tags deploy -run TestDashboardQueriesExportedMetrics -v ./tests/deploy/ >"$out/dashboard.log" 2>&1; then
		ok "Grafana dashboard queries only exported families: $(grep -o '[0-9]* dashboard queries over [0-9]* exported families.*)' "$out/dashboard.log")"
	else
		fail "Grafana dashboard metrics"; cat "$out/dashboard.log"
	fi
else
	skip "Grafana dashboard metrics (no cluster)"
fi

say "done in $((SECONDS - t0)) s"
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
