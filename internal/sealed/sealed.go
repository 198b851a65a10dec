// Package sealed makes the opaque tokens the gateway hands to a client and
// later takes back (list page tokens, prefix-lookup continuations, scan
// cursors): the payload travels in the clear but is authenticated with
// HMAC-SHA-256 (RFC 2104) and bound to a kind and a scope, so a token altered
// by hand, minted for another kind of token, or issued for another scope
// (cluster, database, table, principal, query) is refused.
//
// Token layout, base64url without padding (RFC 4648 §5):
//
//	version (1 byte, 1) | payload | tag (16 bytes)
//
// where tag is the first 16 bytes of HMAC-SHA-256(key, version | kind | 0x00 |
// scope | 0x00 | payload). A Sealer shared by gateway replicas needs the same
// key on each (`gateway.security.token-key`); a Sealer made by NewRandom
// accepts only the tokens of its own process.
//
// The package imports only the standard library, so any layer may use it.
package sealed

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// MinKeyBytes is the shortest key New accepts (256 bits).
const MinKeyBytes = 32

const (
	version = 1
	tagSize = 16
)

// ErrInvalid is returned (wrapped) by Open for a token that is not base64url,
// too short, of another version, altered, or sealed for another kind or
// scope. The cases are not told apart: a client learns only that the token
// was not issued for this request.
var ErrInvalid = errors.New("token was not issued for this request or was altered")

// Sealer seals and opens tokens with one key. It is safe for concurrent use.
type Sealer struct {
	key []byte
}

// New returns a Sealer with key (at least MinKeyBytes bytes; copied).
func New(key []byte) (*Sealer, error) {
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("token key has %d bytes, at least %d are needed", len(key), MinKeyBytes)
	}
	return &Sealer{key: bytes.Clone(key)}, nil
}

// NewRandom returns a Sealer with a random 256-bit key: its tokens are
// accepted only by the process that made them.
func NewRandom() *Sealer {
	key := make([]byte, MinKeyBytes)
	if _, err := rand.Read(key); err != nil {
		panic("sealed: no randomness: " + err.Error()) // crypto/rand never fails on Linux
	}
	return &Sealer{key: key}
}

// Seal returns the token for payload, bound to kind (what the token is, e.g.
// "page") and scope (what it is valid for, e.g. "c1/db1\x00alice").
func (s *Sealer) Seal(kind, scope string, payload []byte) string {
	buf := make([]byte, 0, 1+len(payload)+tagSize)
	buf = append(buf, version)
	buf = append(buf, payload...)
	buf = append(buf, s.tag(kind, scope, payload)...)
	return base64.RawURLEncoding.EncodeToString(buf)
}

// Open checks token against kind and scope and returns its payload, or an
// error wrapping ErrInvalid. It runs in time linear in len(token).
func (s *Sealer) Open(kind, scope, token string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) < 1+tagSize || raw[0] != version {
		return nil, ErrInvalid
	}
	payload := raw[1 : len(raw)-tagSize]
	if !hmac.Equal(raw[len(raw)-tagSize:], s.tag(kind, scope, payload)) {
		return nil, ErrInvalid
	}
	return payload, nil
}

func (s *Sealer) tag(kind, scope string, payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte{version})
	m.Write([]byte(kind))
	m.Write([]byte{0})
	m.Write([]byte(scope))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)[:tagSize]
}
