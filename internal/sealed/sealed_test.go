package sealed

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSealOpen(t *testing.T) {
	s, err := New(make([]byte, 32))
	require.NoError(t, err)
	other, err := New(append(make([]byte, 31), 1))
	require.NoError(t, err)
	tok := s.Seal("page", "c/db", []byte("after-this"))

	tests := []struct {
		name   string
		sealer *Sealer
		kind   string
		scope  string
		token  string
		want   string
		ok     bool
	}{
		{"round trip", s, "page", "c/db", tok, "after-this", true},
		{"other scope", s, "page", "c/db2", tok, "", false},
		{"other kind", s, "cursor", "c/db", tok, "", false},
		{"other key", other, "page", "c/db", tok, "", false},
		{"not base64", s, "page", "c/db", "%%%", "", false},
		{"too short", s, "page", "c/db", "AQ", "", false},
		{"empty", s, "page", "c/db", "", "", false},
		{"altered payload", s, "page", "c/db", alter(tok, 1), "", false},
		{"altered tag", s, "page", "c/db", alter(tok, -1), "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.sealer.Open(tc.kind, tc.scope, tc.token)
			if !tc.ok {
				assert.ErrorIs(t, err, ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestScopeBoundaryIsUnambiguous(t *testing.T) {
	s := NewRandom()
	tok := s.Seal("a", "b", nil)
	_, err := s.Open("ab", "", tok)
	assert.ErrorIs(t, err, ErrInvalid)
}

func TestNewRefusesShortKeys(t *testing.T) {
	_, err := New(make([]byte, 31))
	assert.Error(t, err)
}

// alter flips one bit of the decoded token at index i (negative: from the end).
func alter(tok string, i int) string {
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	if i < 0 {
		i += len(raw)
	}
	raw[i] ^= 1
	return base64.RawURLEncoding.EncodeToString(raw)
}

func FuzzOpen(f *testing.F) {
	s := NewRandom()
	f.Add(s.Seal("page", "x", []byte("p")))
	f.Add("")
	f.Fuzz(func(t *testing.T, tok string) {
		if p, err := s.Open("page", "x", tok); err == nil {
			assert.Equal(t, tok, s.Seal("page", "x", p))
		}
	})
}
