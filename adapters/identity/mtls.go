package identity

import (
	"context"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// mtlsAuth takes the principal from the verified client certificate chain
// (domain.Credentials.ClientCertificates). The TLS listener verifies the
// chain against the client CAs; this adapter only re-checks the leaf's
// validity period, which a long-lived connection can outlive.
type mtlsAuth struct {
	field string
	now   func() time.Time
}

func newMTLS(cfg Config, p *problems) func() (Authenticator, error) {
	field := cfg.MTLS.PrincipalField
	if field == "" {
		field = DefaultMTLSPrincipalField
	}
	switch field {
	case PrincipalFieldCN, PrincipalFieldSubject, PrincipalFieldSANDNS, PrincipalFieldSANEmail, PrincipalFieldSANURI:
	default:
		p.add(KeyMTLSPrincipalField, fmt.Sprintf("unknown field %q: expected cn, subject, san-dns, san-email or san-uri", field))
	}
	return func() (Authenticator, error) { return &mtlsAuth{field: field, now: time.Now}, nil }
}

func (a *mtlsAuth) principal(leaf *x509.Certificate) string {
	switch a.field {
	case PrincipalFieldSubject:
		return leaf.Subject.String()
	case PrincipalFieldSANDNS:
		if len(leaf.DNSNames) > 0 {
			return leaf.DNSNames[0]
		}
	case PrincipalFieldSANEmail:
		if len(leaf.EmailAddresses) > 0 {
			return leaf.EmailAddresses[0]
		}
	case PrincipalFieldSANURI:
		if len(leaf.URIs) > 0 && leaf.URIs[0] != nil {
			return leaf.URIs[0].String()
		}
	default:
		return leaf.Subject.CommonName
	}
	return ""
}

func (a *mtlsAuth) Authenticate(_ context.Context, c domain.Credentials) (domain.Principal, error) {
	if len(c.ClientCertificates) == 0 || c.ClientCertificates[0] == nil {
		return domain.Principal{}, unauthenticated(ErrNoCredentials, "a verified TLS client certificate is required")
	}
	leaf := c.ClientCertificates[0]
	now := a.now()
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return domain.Principal{}, unauthenticated(ErrInvalidCredentials, "the client certificate is expired or not yet valid")
	}
	name := a.principal(leaf)
	if !validPrincipal(name) {
		return domain.Principal{}, unauthenticated(ErrInvalidCredentials,
			"the client certificate has no usable "+a.field+" for "+KeyMTLSPrincipalField)
	}
	return domain.Principal{Name: name, Method: MethodMTLS, Groups: certGroups(leaf)}, nil
}

func (*mtlsAuth) Method() string            { return MethodMTLS }
func (*mtlsAuth) Challenge() string         { return "" }
func (*mtlsAuth) ChallengeFor(error) string { return "" }
func (*mtlsAuth) Close() error              { return nil }

// certGroups are the organizational units (OU) of the certificate's
// subject: the groups the issuing CA vouches for, read by the authorization
// policy. Values that are not valid principal names are skipped.
func certGroups(leaf *x509.Certificate) []string {
	var out []string
	for _, ou := range leaf.Subject.OrganizationalUnit {
		if validPrincipal(ou) && len(out) < maxGroups {
			out = append(out, ou)
		}
	}
	return out
}
