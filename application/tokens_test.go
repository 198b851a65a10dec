package application

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

var (
	testTokens = sealed.NewRandom()
	testScope  = newTokenScope(Scope{Cluster: "c1", Principal: domain.Principal{Name: "alice"}}, "tables", "db1")
)

func testPageToken(last string) string { return sealPageToken(testTokens, testScope, last) }

func TestPageTokenBoundToScope(t *testing.T) {
	t.Parallel()
	tok := testPageToken("b")
	other := func(cluster, principal, actAs string, parts ...string) tokenScope {
		return newTokenScope(Scope{Cluster: cluster, Principal: domain.Principal{Name: principal, ActAs: actAs}}, parts...)
	}
	cases := []struct {
		name   string
		tokens *sealed.Sealer
		scope  tokenScope
		ok     bool
	}{
		{"same listing", testTokens, testScope, true},
		{"another database", testTokens, other("c1", "alice", "", "tables", "db2"), false},
		{"another cluster", testTokens, other("c2", "alice", "", "tables", "db1"), false},
		{"another principal", testTokens, other("c1", "bob", "", "tables", "db1"), false},
		{"acting as someone", testTokens, other("c1", "alice", "bob", "tables", "db1"), false},
		{"another listing", testTokens, other("c1", "alice", "", "databases"), false},
		{"parts not confused", testTokens, other("c1", "alice", "", "tables", "db", "1"), false},
		{"another key", sealed.NewRandom(), testScope, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := openPageToken(tc.tokens, tc.scope, tok)
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, "b", got)
				return
			}
			require.Error(t, err)
			assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
		})
	}
}

func TestPrefixTokenBoundAndBounded(t *testing.T) {
	t.Parallel()
	scope := Scope{Cluster: "c1", Principal: domain.Principal{Name: "alice"}}
	path := domain.TablePath{Database: "db", Table: "t"}
	prefix := []domain.Datum{{I64: 7}, {Bytes: []byte("x")}}
	ps := prefixScope(scope, path, []string{"a", "b"}, prefix)
	tok := sealPrefixToken(testTokens, ps, 1000)
	n, err := openPrefixToken(testTokens, ps, tok)
	require.NoError(t, err)
	assert.Equal(t, 1000, n)

	for name, s := range map[string]tokenScope{
		"other prefix value": prefixScope(scope, path, []string{"a", "b"}, []domain.Datum{{I64: 8}, {Bytes: []byte("x")}}),
		"other columns":      prefixScope(scope, path, []string{"a"}, prefix),
		"other table":        prefixScope(scope, domain.TablePath{Database: "db", Table: "u"}, []string{"a", "b"}, prefix),
		"other principal":    prefixScope(Scope{Cluster: "c1", Principal: domain.Principal{Name: "bob"}}, path, []string{"a", "b"}, prefix),
		"null vs zero":       prefixScope(scope, path, []string{"a", "b"}, []domain.Datum{{Null: true, I64: 7}, {Bytes: []byte("x")}}),
	} {
		_, err := openPrefixToken(testTokens, s, tok)
		assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err), name)
	}
	// Offsets the gateway never issues are refused even when sealed.
	for _, off := range []int{0, maxPrefixOffset + 1, math.MaxInt32 + 1} {
		_, err := openPrefixToken(testTokens, ps, sealPrefixToken(testTokens, ps, off))
		assert.Error(t, err, "offset %d", off)
	}
}

// FuzzOpenTokens: any string is answered with a value or invalid_argument,
// never a panic, and a token that opens carries a value the gateway issues.
func FuzzOpenTokens(f *testing.F) {
	ps := prefixScope(Scope{Cluster: "c"}, domain.TablePath{Database: "d", Table: "t"}, []string{"k"}, []domain.Datum{{I64: 1}})
	f.Add(testPageToken("b"))
	f.Add(sealPrefixToken(testTokens, ps, 5))
	f.Add("")
	f.Add("AQ")
	f.Add("2999.abc")
	f.Fuzz(func(t *testing.T, tok string) {
		if _, err := openPageToken(testTokens, testScope, tok); err != nil {
			assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
		}
		n, err := openPrefixToken(testTokens, ps, tok)
		if err != nil {
			assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
			return
		}
		assert.True(t, n > 0 && n <= maxPrefixOffset, n)
	})
}
