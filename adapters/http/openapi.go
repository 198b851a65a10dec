package http

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

// openAPIYAML is the hand-written OpenAPI 3.1 document of the REST API. A
// test keeps its paths and methods identical to the registered routes.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// openAPIJSON renders the embedded document as JSON, the form served at
// /v1/openapi.json. maxKeys and maxPrefixes, when positive, replace the
// documented `maxItems` of LookupRequest.keys and
// PrefixLookupRequest.prefixes (the embedded defaults), so that the served
// document states the caps this gateway enforces.
func openAPIJSON(maxKeys, maxPrefixes int) ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("http: embedded openapi.yaml: %w", err)
	}
	setMaxItems(doc, "LookupRequest", "keys", maxKeys)
	setMaxItems(doc, "PrefixLookupRequest", "prefixes", maxPrefixes)
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("http: embedded openapi.yaml is not JSON-compatible: %w", err)
	}
	return out, nil
}

// setMaxItems sets components.schemas.<schema>.properties.<prop>.maxItems
// to n when n is positive and the property is documented.
func setMaxItems(doc map[string]any, schema, prop string, n int) {
	if n <= 0 {
		return
	}
	m := doc
	for _, k := range []string{"components", "schemas", schema, "properties", prop} {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	m["maxItems"] = n
}
