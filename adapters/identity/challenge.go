package identity

import "errors"

// bearerChallenge renders RFC 6750 section 3 challenges for a realm.
type bearerChallenge string

func (b bearerChallenge) base() string { return `Bearer realm="` + string(b) + `"` }

// forError omits the error code when the request had no bearer credentials
// (RFC 6750 section 3.1), and otherwise says whether they were malformed or
// rejected.
func (b bearerChallenge) forError(err error) string {
	switch {
	case errors.Is(err, ErrMalformedCredentials):
		return b.base() + `, error="invalid_request"`
	case errors.Is(err, ErrInvalidCredentials):
		return b.base() + `, error="invalid_token"`
	default:
		return b.base()
	}
}
