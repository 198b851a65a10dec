package application

import (
	"encoding/binary"
	"math"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// Kinds of the opaque tokens the application hands out, sealed with
// internal/sealed: a token of one kind is never accepted as another.
const (
	tokenKindPage   = "page/v1"
	tokenKindPrefix = "prefix-lookup/v1"
)

// maxPrefixOffset bounds the offset a prefix-lookup continuation carries: the
// rows of one prefix already returned. Far above any answer Fluss sends for
// one prefix, and small enough that offset + max rows per prefix never
// overflows an int32 (the wire type of the limit).
const maxPrefixOffset = math.MaxInt32 / 2

// tokenScope is the scope a token is bound to: the cluster, the principal
// (name and act-as user) and the listing or query it continues. Each part is
// length-prefixed so no two different scopes encode alike.
type tokenScope []byte

func newTokenScope(scope Scope, parts ...string) tokenScope {
	s := make(tokenScope, 0, 64)
	s = s.add(scope.Cluster).add(scope.Principal.Method).add(scope.Principal.Name).add(scope.Principal.ActAs)
	for _, p := range parts {
		s = s.add(p)
	}
	return s
}

func (s tokenScope) add(part string) tokenScope {
	s = binary.AppendUvarint(s, uint64(len(part)))
	return append(s, part...)
}

// addDatum appends a canonical encoding of d (every field, nested values
// recursively) so two prefixes share a scope only when they are equal.
func (s tokenScope) addDatum(d domain.Datum) tokenScope {
	if d.Null {
		s = append(s, 1)
	} else {
		s = append(s, 0)
	}
	s = binary.AppendVarint(s, d.I64)
	s = binary.AppendVarint(s, int64(d.Nanos))
	s = binary.BigEndian.AppendUint64(s, math.Float64bits(d.F64))
	s = s.add(string(d.Bytes))
	s = binary.AppendUvarint(s, uint64(len(d.Elems)))
	for _, e := range d.Elems {
		s = s.addDatum(e)
	}
	return s
}

// sealPageToken makes the page token of a listing page that ends at last.
func sealPageToken(tokens *sealed.Sealer, scope tokenScope, last string) string {
	return tokens.Seal(tokenKindPage, string(scope), []byte(last))
}

// openPageToken returns the key the page token continues after, or
// invalid_argument when the token was not issued for this listing (another
// cluster, database, table, principal, gateway key) or was altered.
func openPageToken(tokens *sealed.Sealer, scope tokenScope, token string) (string, error) {
	if token == "" {
		return "", nil
	}
	last, err := tokens.Open(tokenKindPage, string(scope), token)
	if err != nil {
		return "", domain.InvalidArgument("page_token: not a token returned by this listing (another listing, principal or gateway key, or altered)")
	}
	return string(last), nil
}

// prefixScope binds a prefix-lookup continuation to the request it
// continues: cluster, principal, table, prefix columns and prefix values.
func prefixScope(scope Scope, path domain.TablePath, cols []string, prefix []domain.Datum) tokenScope {
	s := newTokenScope(scope, path.Database, path.Table)
	s = binary.AppendUvarint(s, uint64(len(cols)))
	for _, c := range cols {
		s = s.add(c)
	}
	s = binary.AppendUvarint(s, uint64(len(prefix)))
	for _, d := range prefix {
		s = s.addDatum(d)
	}
	return s
}

// sealPrefixToken makes the continuation of a truncated prefix answer that
// already returned offset rows.
func sealPrefixToken(tokens *sealed.Sealer, scope tokenScope, offset int) string {
	return tokens.Seal(tokenKindPrefix, string(scope), binary.BigEndian.AppendUint32(nil, uint32(offset)))
}

// openPrefixToken returns the rows already returned (1..maxPrefixOffset) by
// the answer the continuation token continues, or invalid_argument.
func openPrefixToken(tokens *sealed.Sealer, scope tokenScope, token string) (int, error) {
	bad := domain.InvalidArgument("page_token: not a token this gateway issued for this table, prefix and principal, or altered")
	raw, err := tokens.Open(tokenKindPrefix, string(scope), token)
	if err != nil || len(raw) != 4 {
		return 0, bad
	}
	n := binary.BigEndian.Uint32(raw)
	if n == 0 || n > maxPrefixOffset {
		return 0, bad
	}
	return int(n), nil
}
