//go:build otel

package otel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// The collector's file exporter writes one OTLP/JSON export request per line
// (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): trace
// and span ids in hex, enums as integers, 64-bit integers as strings. These
// types decode the parts the test asserts on.

type otlpLine struct {
	ResourceSpans   []resourceSpans   `json:"resourceSpans"`
	ResourceMetrics []resourceMetrics `json:"resourceMetrics"`
}

type resource struct {
	Attributes []keyValue `json:"attributes"`
}

type scope struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type resourceSpans struct {
	Resource   resource `json:"resource"`
	ScopeSpans []struct {
		Scope scope  `json:"scope"`
		Spans []span `json:"spans"`
	} `json:"scopeSpans"`
}

type span struct {
	TraceID      string     `json:"traceId"`
	SpanID       string     `json:"spanId"`
	ParentSpanID string     `json:"parentSpanId"`
	Name         string     `json:"name"`
	Kind         int        `json:"kind"`
	Attributes   []keyValue `json:"attributes"`
	Links        []spanLink `json:"links"`
	Status       struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"status"`

	// Filled in by readOTLP.
	Resource map[string]string `json:"-"`
	Scope    string            `json:"-"`
}

type spanLink struct {
	TraceID string `json:"traceId"`
	SpanID  string `json:"spanId"`
}

// OTLP span kinds and status codes.
const (
	spanKindServer = 2
	spanKindClient = 3
	statusError    = 2
)

type resourceMetrics struct {
	Resource     resource `json:"resource"`
	ScopeMetrics []struct {
		Scope   scope `json:"scope"`
		Metrics []struct {
			Name string `json:"name"`
			Unit string `json:"unit"`
		} `json:"metrics"`
	} `json:"scopeMetrics"`
}

type keyValue struct {
	Key   string   `json:"key"`
	Value anyValue `json:"value"`
}

type anyValue struct {
	StringValue *string          `json:"stringValue"`
	IntValue    *json.RawMessage `json:"intValue"` // "201" (string) or 201
	BoolValue   *bool            `json:"boolValue"`
	DoubleValue *float64         `json:"doubleValue"`
}

// String renders any scalar value as text.
func (v anyValue) String() string {
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case v.IntValue != nil:
		return strings.Trim(string(*v.IntValue), `"`)
	case v.BoolValue != nil:
		return fmt.Sprint(*v.BoolValue)
	case v.DoubleValue != nil:
		return fmt.Sprint(*v.DoubleValue)
	}
	return ""
}

func attrs(kvs []keyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.String()
	}
	return m
}

// metricEntry is one metric name seen in the file, with its scope and resource.
type metricEntry struct {
	Name, Unit, Scope string
	Resource          map[string]string
}

// readOTLP decodes the collector's output file.
func readOTLP(path string) ([]span, []metricEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var spans []span
	var metrics []metricEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var line otlpLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		for _, rs := range line.ResourceSpans {
			res := attrs(rs.Resource.Attributes)
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					s.Resource, s.Scope = res, ss.Scope.Name
					spans = append(spans, s)
				}
			}
		}
		for _, rm := range line.ResourceMetrics {
			res := attrs(rm.Resource.Attributes)
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					metrics = append(metrics, metricEntry{Name: m.Name, Unit: m.Unit, Scope: sm.Scope.Name, Resource: res})
				}
			}
		}
	}
	return spans, metrics, sc.Err()
}
