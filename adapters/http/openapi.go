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
// /v1/openapi.json.
func openAPIJSON() ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		return nil, fmt.Errorf("http: embedded openapi.yaml: %w", err)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("http: embedded openapi.yaml is not JSON-compatible: %w", err)
	}
	return out, nil
}
