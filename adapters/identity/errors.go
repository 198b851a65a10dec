package identity

import (
	"errors"
	"strings"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Reasons carried as the Cause of every authentication failure. Test them
// with errors.Is; ChallengeFor uses them to pick the RFC 6750 error code.
var (
	// ErrNoCredentials: the request carries no credentials for the
	// configured method (no or another Authorization scheme, no header).
	ErrNoCredentials = errors.New("identity: no credentials")
	// ErrMalformedCredentials: the credentials cannot be parsed.
	ErrMalformedCredentials = errors.New("identity: malformed credentials")
	// ErrInvalidCredentials: the credentials were parsed and rejected.
	ErrInvalidCredentials = errors.New("identity: invalid credentials")
	// ErrSourceNotAllowed: the client address may not use this method.
	ErrSourceNotAllowed = errors.New("identity: source address not allowed")
)

// ConfigError is a configuration problem; Key is the offending key.
type ConfigError struct {
	Key     string
	Problem string
}

func (e *ConfigError) Error() string { return e.Key + ": " + e.Problem }

// problems collects configuration errors.
type problems []error

func (p *problems) add(key, problem string) {
	*p = append(*p, &ConfigError{Key: key, Problem: problem})
}

func (p problems) err() error { return errors.Join(p...) }

// unauthenticated builds the failure of every authenticator. msg must not
// contain the presented credential.
func unauthenticated(reason error, msg string) error {
	return &domain.Error{Kind: domain.KindUnauthenticated, Message: msg, Cause: reason}
}

// header reads a request header; a nil accessor reads as absent.
func header(c domain.Credentials, name string) string {
	if c.Header == nil {
		return ""
	}
	return c.Header(name)
}

// authParam returns the parameter of an Authorization header of the given
// scheme (RFC 9110 section 11.4: case-insensitive scheme, one or more
// spaces, one token68).
func authParam(c domain.Credentials, scheme string) (string, error) {
	v := strings.TrimSpace(header(c, "Authorization"))
	if v == "" {
		return "", unauthenticated(ErrNoCredentials, "missing "+scheme+" credentials in the Authorization header")
	}
	name, rest, _ := strings.Cut(v, " ")
	if !strings.EqualFold(name, scheme) {
		return "", unauthenticated(ErrNoCredentials, "the Authorization header must use the "+scheme+" scheme")
	}
	rest = strings.TrimLeft(rest, " ")
	if rest == "" || strings.ContainsFunc(rest, isSpaceOrControl) {
		return "", unauthenticated(ErrMalformedCredentials, "malformed "+scheme+" credentials in the Authorization header")
	}
	return rest, nil
}

func isSpaceOrControl(r rune) bool {
	return r <= ' ' || r == 0x7f
}
