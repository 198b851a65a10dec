package http

import (
	"github.com/gofiber/fiber/v2"
	"log/slog"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// localPrincipal holds the authenticated domain.Principal of a request.
const localPrincipal = "fluss-gateway.principal"

// challenger is implemented by authenticators that know the WWW-Authenticate
// value of a 401 (adapters/identity.Authenticator); an empty value sends no
// header (methods without an HTTP authentication scheme: trust,
// trusted-header, mtls).
type challenger interface {
	ChallengeFor(err error) string
}

// anonymous is the principal of every caller when no Identity is configured.
var anonymous = domain.Principal{Method: "trust"}

// principalName is how logs name p: its name, or "anonymous" for the
// nameless principal of trust mode (as the start log says).
func principalName(p domain.Principal) string {
	if p.Name == "" {
		return "anonymous"
	}
	return p.Name
}

// authenticate authenticates the callers of every route but the probes and
// the OpenAPI document, before quotas and admission, so that an
// unauthenticated request costs no slot or token. The principal (with its
// act-as target) goes into the fiber locals, the request context
// (domain.PrincipalFromContext) and the access log line. Failures answer 401
// `unauthenticated` with the authenticator's WWW-Authenticate challenge, or
// 403 `unauthorized` when an authenticated caller may not use the act-as
// header; the presented credentials never reach a log or a message.
func (a *api) authenticate(r routeSpec) fiber.Handler {
	if r.open || r.public {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	return func(c *fiber.Ctx) error {
		p, ok := c.Locals(localPreauthenticated).(domain.Principal)
		if !ok {
			var err error
			if p, err = a.authenticateRequest(c); err != nil {
				a.setChallenge(c, err)
				return err
			}
		}
		c.Locals(localPrincipal, p)
		c.SetUserContext(domain.ContextWithPrincipal(c.UserContext(), p))
		if p.ActAs != "" {
			addLogAttr(c, slog.String("principal", principalName(p)), slog.String("auth_method", p.Method), slog.String("act_as", p.ActAs))
		} else {
			addLogAttr(c, slog.String("principal", principalName(p)), slog.String("auth_method", p.Method))
		}
		return c.Next()
	}
}

// setChallenge logs an authentication failure on the access line and sets
// the authenticator's WWW-Authenticate challenge of a 401.
func (a *api) setChallenge(c *fiber.Ctx, err error) {
	de := domain.AsError(err)
	if de == nil {
		return
	}
	addLogAttrs(c, "auth_error", de.Message)
	if de.Kind == domain.KindUnauthenticated {
		if ch, ok := a.identity.(challenger); ok {
			if v := ch.ChallengeFor(err); v != "" {
				c.Set(fiber.HeaderWWWAuthenticate, v)
			}
		}
	}
}

// authenticateRequest runs the Identity over the request's credentials:
// headers, peer address and the verified TLS client certificate chain.
func (a *api) authenticateRequest(c *fiber.Ctx) (domain.Principal, error) {
	if a.identity == nil {
		return anonymous, nil
	}
	creds := domain.Credentials{
		Header:     func(name string) string { return c.Get(name) },
		RemoteAddr: c.Context().RemoteAddr().String(),
	}
	if st := c.Context().TLSConnectionState(); st != nil && len(st.VerifiedChains) > 0 && len(st.VerifiedChains[0]) > 0 {
		chain := st.VerifiedChains[0]
		creds.ClientCertificates = chain
		creds.ClientCertSubject = chain[0].Subject.String()
	}
	p, err := a.identity.Authenticate(c.UserContext(), creds)
	if err != nil {
		if domain.AsError(err) == nil {
			// A foreign error must not become a 500 that hides an
			// authentication failure, nor leak its text.
			a.log.ErrorContext(c.UserContext(), "authenticator failed", "request_id", requestID(c), "error", err)
			return domain.Principal{}, &domain.Error{Kind: domain.KindUnauthenticated, Message: "authentication failed", Cause: err}
		}
		return domain.Principal{}, err
	}
	return p, nil
}

// principal returns the request's authenticated principal.
func (a *api) principal(c *fiber.Ctx) (domain.Principal, error) {
	if p, ok := c.Locals(localPrincipal).(domain.Principal); ok {
		return p, nil
	}
	return a.authenticateRequest(c)
}
