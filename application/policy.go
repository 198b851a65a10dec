package application

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Operation is what a request does to a database or table, as the
// gateway-side authorization policy names it.
type Operation string

// Operations of the policy.
const (
	// OpRead: list, describe, exists, lookups and prefix lookups.
	OpRead Operation = "read"
	// OpWrite: write records.
	OpWrite Operation = "write"
	// OpDDL: create databases, tables and partitions; alter tables.
	OpDDL Operation = "ddl"
	// OpDrop: drop databases, tables and partitions.
	OpDrop Operation = "drop"
)

// Operations lists every operation, in the order the documentation names them.
var Operations = []Operation{OpRead, OpWrite, OpDDL, OpDrop}

// GroupPrefix marks a group in PolicyRule.Principals (`group:analysts`).
const GroupPrefix = "group:"

// AnonymousPrincipal is the name rules use for the nameless principal of
// trust mode.
const AnonymousPrincipal = "anonymous"

// PolicyRule allows Operations to Principals on the Tables of Clusters.
type PolicyRule struct {
	// Principals are principal names, `group:<name>` entries or "*" (any
	// authenticated principal).
	Principals []string
	// Operations are Operations values or "*" (all).
	Operations []Operation
	// Tables are `<database>.<table>` glob patterns (path.Match syntax,
	// e.g. `sales.*`, `*.events`, `*`); a pattern without a dot names a
	// database and all its tables. Database-level requests (create, drop
	// or describe a database, create a table, list tables) match on the
	// database part only.
	Tables []string
	// Clusters are cluster ids; empty means every cluster.
	Clusters []string
}

// Policy is the gateway-side authorization policy of service mode
// (`gateway.security.authorization.policy-file`): once configured, a request
// is allowed only when a rule allows its operation on its resource to its
// principal or one of the principal's groups (deny by default). Groups come
// from the authentication (a JWT groups claim, a client certificate's OUs)
// and from Groups.
type Policy struct {
	Rules []PolicyRule
	// Groups maps a group to its member principals, for the methods
	// without group claims (password, token, trusted-header, trust).
	Groups map[string][]string
}

// Validate checks the policy's rules: known operations, well-formed
// patterns, no empty lists.
func (p *Policy) Validate() error {
	if len(p.Rules) == 0 {
		return fmt.Errorf("the policy has no rules: it would deny every request")
	}
	for i, r := range p.Rules {
		if len(r.Principals) == 0 || len(r.Operations) == 0 || len(r.Tables) == 0 {
			return fmt.Errorf("rules[%d]: principals, operations and tables must not be empty", i)
		}
		for _, op := range r.Operations {
			if op != "*" && !slices.Contains(Operations, op) {
				return fmt.Errorf("rules[%d]: unknown operation %q (expected read, write, ddl, drop or *)", i, op)
			}
		}
		for _, t := range r.Tables {
			if _, err := path.Match(t, ""); err != nil || strings.Count(t, ".") > 1 || t == "" {
				return fmt.Errorf("rules[%d]: %q is not a <database>.<table> pattern", i, t)
			}
		}
		for _, pr := range r.Principals {
			if pr == "" || pr == GroupPrefix {
				return fmt.Errorf("rules[%d]: empty principal", i)
			}
		}
	}
	return nil
}

// Authorize returns nil when the policy allows op on the database (and
// table, "" for database-level requests) of cluster to principal, and
// otherwise an unauthorized error naming the principal, operation and
// resource. A nil Policy allows everything.
func (p *Policy) Authorize(principal domain.Principal, cluster string, op Operation, database, table string) error {
	if p == nil {
		return nil
	}
	name := effectiveName(principal)
	groups := p.groupsOf(principal, name)
	for _, r := range p.Rules {
		if r.allows(name, groups, cluster, op, database, table) {
			return nil
		}
	}
	resource := "cluster `" + cluster + "`"
	if database != "" {
		resource = domain.TablePath{Database: database, Table: table}.String()
		if table == "" {
			resource = "database `" + database + "`"
		} else {
			resource = "table `" + resource + "`"
		}
	}
	return domain.Errorf(domain.KindUnauthorized,
		"principal %q may not %s %s: no rule of the gateway's authorization policy allows it", name, op, resource)
}

// effectiveName is whom the request acts for: the act-as target when set
// (the caller was allowed to act as it), else the principal; the nameless
// trust principal is AnonymousPrincipal.
func effectiveName(p domain.Principal) string {
	switch {
	case p.ActAs != "":
		return p.ActAs
	case p.Name == "":
		return AnonymousPrincipal
	}
	return p.Name
}

// groupsOf: the groups the authentication asserted for the caller (not for
// an act-as target) and the policy's own groups of name.
func (p *Policy) groupsOf(principal domain.Principal, name string) []string {
	var out []string
	if principal.ActAs == "" {
		out = append(out, principal.Groups...)
	}
	for g, members := range p.Groups {
		if slices.Contains(members, name) {
			out = append(out, g)
		}
	}
	return out
}

func (r PolicyRule) allows(name string, groups []string, cluster string, op Operation, database, table string) bool {
	if len(r.Clusters) > 0 && !slices.Contains(r.Clusters, cluster) {
		return false
	}
	if !slices.Contains(r.Operations, op) && !slices.Contains(r.Operations, "*") {
		return false
	}
	who := false
	for _, pr := range r.Principals {
		if g, ok := strings.CutPrefix(pr, GroupPrefix); ok {
			who = slices.Contains(groups, g)
		} else {
			who = pr == "*" || pr == name
		}
		if who {
			break
		}
	}
	if !who {
		return false
	}
	for _, pattern := range r.Tables {
		if matchResource(pattern, database, table) {
			return true
		}
	}
	return false
}

// matchResource matches a `<database>.<table>` pattern: on the database
// part alone when table is "" (and for a listing of databases, database is
// "" too: any rule of the operation matches).
func matchResource(pattern, database, table string) bool {
	dbPattern, tablePattern, hasTable := strings.Cut(pattern, ".")
	if !hasTable {
		tablePattern = "*"
	}
	if database == "" {
		return true
	}
	if ok, _ := path.Match(dbPattern, database); !ok {
		return false
	}
	if table == "" {
		return true
	}
	ok, _ := path.Match(tablePattern, table)
	return ok
}
