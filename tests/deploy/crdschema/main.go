// Command crdschema turns CustomResourceDefinition manifests into the JSON
// schemas kubeconform validates custom resources with, one file per served
// version: <out>/<group>/<kind>_<version>.json (kind lower-cased), matching
// the schema location {{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json.
//
//	go run ./tests/deploy/crdschema -out DIR CRD.yaml...
//
// The schema is the version's openAPIV3Schema. With -strict, every object
// schema that lists properties and says nothing about others
// (additionalProperties, x-kubernetes-preserve-unknown-fields) gets
// additionalProperties: false, as kubeconform's strict schemas for the
// built-in kinds do, so a misspelt field fails validation.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

type crd struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Group string `yaml:"group"`
		Names struct {
			Kind string `yaml:"kind"`
		} `yaml:"names"`
		Versions []struct {
			Name   string `yaml:"name"`
			Served bool   `yaml:"served"`
			Schema struct {
				OpenAPIV3Schema map[string]any `yaml:"openAPIV3Schema"`
			} `yaml:"schema"`
		} `yaml:"versions"`
	} `yaml:"spec"`
}

func main() {
	out := flag.String("out", "", "output directory")
	strict := flag.Bool("strict", true, "forbid properties a schema does not list")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: crdschema -out DIR CRD.yaml...")
		os.Exit(2)
	}
	n := 0
	for _, path := range flag.Args() {
		count, err := convert(path, *out, *strict)
		if err != nil {
			fmt.Fprintf(os.Stderr, "crdschema: %s: %v\n", path, err)
			os.Exit(1)
		}
		n += count
	}
	fmt.Printf("crdschema: %d schemas in %s\n", n, *out)
}

func convert(path, out string, strict bool) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var c crd
	if err := yaml.Unmarshal(raw, &c); err != nil {
		return 0, err
	}
	if c.Kind != "CustomResourceDefinition" {
		return 0, fmt.Errorf("kind %q, want CustomResourceDefinition", c.Kind)
	}
	n := 0
	for _, v := range c.Spec.Versions {
		if !v.Served || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		schema := v.Schema.OpenAPIV3Schema
		if strict {
			forbidUnknown(schema)
		}
		b, err := json.MarshalIndent(schema, "", "  ")
		if err != nil {
			return 0, err
		}
		dir := filepath.Join(out, c.Spec.Group)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		name := filepath.Join(dir, strings.ToLower(c.Spec.Names.Kind)+"_"+v.Name+".json")
		if err := os.WriteFile(name, b, 0o644); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// forbidUnknown closes every object schema that lists its properties,
// walking the schema structure (properties, items, additionalProperties and
// the combinators) so that a property literally named "properties" is not
// mistaken for a schema keyword.
func forbidUnknown(schema map[string]any) {
	if props, ok := schema["properties"].(map[string]any); ok {
		_, hasAP := schema["additionalProperties"]
		_, preserve := schema["x-kubernetes-preserve-unknown-fields"]
		if !hasAP && !preserve {
			schema["additionalProperties"] = false
		}
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				forbidUnknown(m)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		if m, ok := schema[key].(map[string]any); ok {
			forbidUnknown(m)
		}
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := schema[key].([]any); ok {
			for _, item := range list {
				if m, ok := item.(map[string]any); ok {
					forbidUnknown(m)
				}
			}
		}
	}
}
