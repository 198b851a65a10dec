package application

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestPolicyAuthorize(t *testing.T) {
	t.Parallel()
	p := &Policy{
		Groups: map[string][]string{"ops": {"olga"}},
		Rules: []PolicyRule{
			{Principals: []string{"alice"}, Operations: []Operation{OpRead, OpWrite}, Tables: []string{"sales.*", "*.events"}},
			{Principals: []string{"group:admins", "group:ops"}, Operations: []Operation{"*"}, Tables: []string{"*"}, Clusters: []string{"c1"}},
			{Principals: []string{"*"}, Operations: []Operation{OpRead}, Tables: []string{"public"}},
			{Principals: []string{AnonymousPrincipal}, Operations: []Operation{OpRead}, Tables: []string{"open.t"}},
		},
	}
	require.NoError(t, p.Validate())
	alice := domain.Principal{Name: "alice", Method: "token"}
	cases := []struct {
		name      string
		principal domain.Principal
		cluster   string
		op        Operation
		db, table string
		ok        bool
	}{
		{"table in pattern", alice, "c1", OpWrite, "sales", "orders", true},
		{"database of pattern", alice, "c1", OpRead, "sales", "", true},
		{"table glob on any database", alice, "c1", OpRead, "hr", "events", true},
		{"operation not granted", alice, "c1", OpDrop, "sales", "orders", false},
		{"ddl not granted", alice, "c1", OpDDL, "sales", "", false},
		{"database not in pattern", alice, "c1", OpRead, "hr", "salaries", false},
		{"list databases with a read rule", alice, "c1", OpRead, "", "", true},
		{"group claim", domain.Principal{Name: "zed", Groups: []string{"admins"}}, "c1", OpDrop, "x", "y", true},
		{"group claim on another cluster", domain.Principal{Name: "zed", Groups: []string{"admins"}}, "c2", OpDrop, "x", "y", false},
		{"policy group", domain.Principal{Name: "olga"}, "c1", OpDDL, "x", "", true},
		{"any principal", domain.Principal{Name: "bob"}, "c2", OpRead, "public", "t", true},
		{"any principal, other database", domain.Principal{Name: "bob"}, "c2", OpRead, "private", "t", false},
		{"anonymous", domain.Principal{Method: "trust"}, "c1", OpRead, "open", "t", true},
		{"act-as checks the target", domain.Principal{Name: "alice", ActAs: "bob"}, "c1", OpWrite, "sales", "orders", false},
		{"act-as target drops the caller's claimed groups", domain.Principal{Name: "zed", ActAs: "bob", Groups: []string{"admins"}}, "c1", OpDrop, "x", "y", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := p.Authorize(tc.principal, tc.cluster, tc.op, tc.db, tc.table)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, domain.KindUnauthorized, domain.KindOf(err))
		})
	}
	var none *Policy
	assert.NoError(t, none.Authorize(alice, "c1", OpDrop, "x", ""), "no policy allows everything")
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]Policy{
		"no rules":          {},
		"unknown operation": {Rules: []PolicyRule{{Principals: []string{"a"}, Operations: []Operation{"delete"}, Tables: []string{"*"}}}},
		"bad pattern":       {Rules: []PolicyRule{{Principals: []string{"a"}, Operations: []Operation{OpRead}, Tables: []string{"a.b.c"}}}},
		"bad glob":          {Rules: []PolicyRule{{Principals: []string{"a"}, Operations: []Operation{OpRead}, Tables: []string{"[a"}}}},
		"empty principals":  {Rules: []PolicyRule{{Operations: []Operation{OpRead}, Tables: []string{"*"}}}},
	} {
		assert.Error(t, p.Validate(), name)
	}
}
