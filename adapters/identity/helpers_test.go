package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func TestMain(m *testing.M) {
	plaintextCost = bcrypt.MinCost // keep ParseUsers tests fast
	os.Exit(m.Run())
}

// request builds credentials from a peer address and header pairs.
func request(remote string, kv ...string) domain.Credentials {
	h := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		h[strings.ToLower(kv[i])] = kv[i+1]
	}
	return domain.Credentials{
		RemoteAddr: remote,
		Header:     func(name string) string { return h[strings.ToLower(name)] },
	}
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// wantUnauthenticated checks the failure contract: a *domain.Error of kind
// KindUnauthenticated, the given reason, and no secret in the message.
func wantUnauthenticated(t *testing.T, err error, reason error, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("authenticated, want failure (%v)", reason)
	}
	de := domain.AsError(err)
	if de == nil {
		t.Fatalf("error %T %v is not a *domain.Error", err, err)
	}
	if de.Kind != domain.KindUnauthenticated {
		t.Fatalf("kind = %v (%s), want unauthenticated; message %q", de.Kind, de.Code(), de.Message)
	}
	if reason != nil && !errors.Is(err, reason) {
		t.Fatalf("reason = %v, want %v (message %q)", de.Cause, reason, de.Message)
	}
	if de.Message == "" {
		t.Fatal("empty message")
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(de.Message, s) {
			t.Fatalf("message %q leaks the credential", de.Message)
		}
	}
}

func mustNew(t *testing.T, cfg Config) Authenticator {
	t.Helper()
	a, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// wantConfigError checks that New or a parser failed naming key, without
// quoting any secret.
func wantConfigError(t *testing.T, err error, key string, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one naming %s", key)
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *ConfigError", err)
	}
	if !strings.Contains(err.Error(), key+": ") {
		t.Fatalf("error %q does not name %s", err, key)
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("error %q leaks a secret", err)
		}
	}
}

// Test keys, generated once per run.
var (
	keysOnce         sync.Once
	rsaKey, rsaOther *rsa.PrivateKey
	ecKey            *ecdsa.PrivateKey
	edKey            ed25519.PrivateKey
)

func testKeys(t *testing.T) {
	t.Helper()
	keysOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if rsaOther, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		if _, edKey, err = ed25519.GenerateKey(rand.Reader); err != nil {
			panic(err)
		}
	})
}
