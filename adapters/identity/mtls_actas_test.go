package identity

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func testCert(t *testing.T, tmpl x509.Certificate) *x509.Certificate {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(1)
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(time.Hour)
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMTLS(t *testing.T) {
	t.Parallel()
	spiffe, _ := url.Parse("spiffe://example.org/ns/data/sa/writer")
	full := testCert(t, x509.Certificate{
		Subject:        pkix.Name{CommonName: "writer-svc", Organization: []string{"Acme"}},
		DNSNames:       []string{"writer.example.org", "alt.example.org"},
		EmailAddresses: []string{"writer@example.org"},
		URIs:           []*url.URL{spiffe},
	})
	bare := testCert(t, x509.Certificate{Subject: pkix.Name{Organization: []string{"Acme"}}})
	expired := testCert(t, x509.Certificate{Subject: pkix.Name{CommonName: "old"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour)})
	future := testCert(t, x509.Certificate{Subject: pkix.Name{CommonName: "new"},
		NotBefore: time.Now().Add(24 * time.Hour), NotAfter: time.Now().Add(48 * time.Hour)})
	with := func(certs ...*x509.Certificate) domain.Credentials {
		c := request("10.0.0.1:1")
		c.ClientCertificates = certs
		return c
	}
	cases := []struct {
		name   string
		field  string
		creds  domain.Credentials
		want   string
		reason error
	}{
		{"cn (default)", "", with(full), "writer-svc", nil},
		{"subject", PrincipalFieldSubject, with(full), "CN=writer-svc,O=Acme", nil},
		{"san-dns takes the first", PrincipalFieldSANDNS, with(full), "writer.example.org", nil},
		{"san-email", PrincipalFieldSANEmail, with(full), "writer@example.org", nil},
		{"san-uri (SPIFFE)", PrincipalFieldSANURI, with(full), "spiffe://example.org/ns/data/sa/writer", nil},
		{"no certificate", "", with(), "", ErrNoCredentials},
		{"nil leaf", "", with(nil), "", ErrNoCredentials},
		{"subject only in the legacy string field", "", domain.Credentials{ClientCertSubject: "CN=x"}, "", ErrNoCredentials},
		{"no cn", "", with(bare), "", ErrInvalidCredentials},
		{"no san-dns", PrincipalFieldSANDNS, with(bare), "", ErrInvalidCredentials},
		{"no san-email", PrincipalFieldSANEmail, with(bare), "", ErrInvalidCredentials},
		{"no san-uri", PrincipalFieldSANURI, with(bare), "", ErrInvalidCredentials},
		{"expired", "", with(expired), "", ErrInvalidCredentials},
		{"not yet valid", "", with(future), "", ErrInvalidCredentials},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := mustNew(t, Config{Method: MethodMTLS, MTLS: MTLSConfig{PrincipalField: tc.field}})
			p, err := a.Authenticate(context.Background(), tc.creds)
			if tc.reason == nil {
				if err != nil || !reflect.DeepEqual(p, domain.Principal{Name: tc.want, Method: MethodMTLS}) {
					t.Fatalf("got %+v, %v", p, err)
				}
				return
			}
			wantUnauthenticated(t, err, tc.reason)
		})
	}
}

func TestActAs(t *testing.T) {
	t.Parallel()
	aa, err := NewActAs(ActAsConfig{AllowedPrincipals: []string{"etl-service"}})
	if err != nil {
		t.Fatal(err)
	}
	if aa.Header() != DefaultActAsHeader {
		t.Fatal(aa.Header())
	}
	svc := domain.Principal{Name: "etl-service", Method: MethodToken}
	cases := []struct {
		name  string
		p     domain.Principal
		value string
		want  domain.Principal
		kind  domain.Kind
	}{
		{"no header", svc, "", svc, 0},
		{"allowed", svc, "alice", domain.Principal{Name: "etl-service", Method: MethodToken, ActAs: "alice"}, 0},
		{"self", svc, "etl-service", svc, 0},
		{"not on allow-list", domain.Principal{Name: "bob", Method: MethodPassword}, "alice", domain.Principal{}, domain.KindUnauthorized},
		{"anonymous", domain.Principal{Method: MethodTrust}, "alice", domain.Principal{}, domain.KindUnauthorized},
		{"malformed target", svc, "al\x01ice", domain.Principal{}, domain.KindInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := aa.Resolve(tc.p, request("", "X-Fluss-Act-As", tc.value))
			if tc.kind == 0 {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %+v, %v", got, err)
				}
				return
			}
			if domain.KindOf(err) != tc.kind {
				t.Fatalf("error %v, want kind %v", err, tc.kind)
			}
		})
	}

	t.Run("wrapped authenticator", func(t *testing.T) {
		base := mustNew(t, Config{Method: MethodToken, Tokens: map[string]string{HashToken("svc-token"): "etl-service", HashToken("user-token"): "bob"}})
		a := WithActAs(base, aa)
		if a.Method() != MethodToken || a.Challenge() != base.Challenge() {
			t.Fatal("wrapper does not delegate")
		}
		p, err := a.Authenticate(context.Background(), request("", "Authorization", "Bearer svc-token", "x-fluss-act-as", "alice"))
		if err != nil || p.ActAs != "alice" || p.Name != "etl-service" {
			t.Fatalf("%+v %v", p, err)
		}
		_, err = a.Authenticate(context.Background(), request("", "Authorization", "Bearer user-token", "x-fluss-act-as", "alice"))
		if domain.KindOf(err) != domain.KindUnauthorized {
			t.Fatalf("%v", err)
		}
		_, err = a.Authenticate(context.Background(), request("", "Authorization", "Bearer nope", "x-fluss-act-as", "alice"))
		wantUnauthenticated(t, err, ErrInvalidCredentials)
	})

	t.Run("disabled", func(t *testing.T) {
		off, err := NewActAs(ActAsConfig{Header: "X-Impersonate"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = off.Resolve(svc, request("", "x-impersonate", "alice"))
		if domain.KindOf(err) != domain.KindUnauthorized {
			t.Fatalf("%v", err)
		}
	})

	t.Run("config", func(t *testing.T) {
		_, err := NewActAs(ActAsConfig{Header: "bad header"})
		wantConfigError(t, err, KeyActAsHeader)
		_, err = NewActAs(ActAsConfig{AllowedPrincipals: []string{""}})
		wantConfigError(t, err, KeyActAsAllowedPrincipals)
	})
}
