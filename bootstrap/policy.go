package bootstrap

import (
	"bytes"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

// maxPolicyBytes bounds the policy file.
const maxPolicyBytes = 1 << 20

// policyFile is the YAML shape of `gateway.security.authorization.policy-file`:
//
//	groups:                       # optional, for methods without group claims
//	  analysts: [alice, bob]
//	rules:
//	  - principals: [alice, "group:analysts", "*"]
//	    operations: [read, write, ddl, drop]   # or ["*"]
//	    tables: ["sales.*", "*.events", "*"]   # <database>.<table> globs
//	    clusters: [default]                    # optional: every cluster
type policyFile struct {
	Groups map[string][]string `yaml:"groups"`
	Rules  []struct {
		Principals []string `yaml:"principals"`
		Operations []string `yaml:"operations"`
		Tables     []string `yaml:"tables"`
		Clusters   []string `yaml:"clusters"`
	} `yaml:"rules"`
}

// loadPolicy reads the authorization policy named by the configuration;
// nil when none is configured. Errors name the key and the file.
func loadPolicy(cfg *config.Config) (*application.Policy, error) {
	path := cfg.Security.Guard.PolicyFile
	if path == "" {
		return nil, nil
	}
	fail := func(err error) error {
		return fmt.Errorf("%s %s: %w", config.KeyAuthorizationPolicyFile, path, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fail(err)
	}
	if len(raw) > maxPolicyBytes {
		return nil, fail(fmt.Errorf("the file exceeds %d bytes", maxPolicyBytes))
	}
	var f policyFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fail(err)
	}
	p := &application.Policy{Groups: f.Groups}
	for _, r := range f.Rules {
		rule := application.PolicyRule{Principals: r.Principals, Tables: r.Tables, Clusters: r.Clusters}
		for _, op := range r.Operations {
			rule.Operations = append(rule.Operations, application.Operation(op))
		}
		p.Rules = append(p.Rules, rule)
	}
	if err := p.Validate(); err != nil {
		return nil, fail(err)
	}
	return p, nil
}
