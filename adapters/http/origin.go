package http

import (
	"net"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// BrowserGuard protects the API from web pages in a browser (gateway-go
// extension; docs/security.md). The zero value checks nothing and
// sends no CORS headers.
type BrowserGuard struct {
	// AllowedHosts, when not empty, are the Host header values (host name or
	// address, without port, case-insensitive) the API answers; another
	// Host is 403 `unauthorized`. It defeats DNS rebinding: a page of
	// attacker.example whose name now resolves to 127.0.0.1 still sends
	// `Host: attacker.example`. "*" allows any. Trust mode sets the loopback
	// names (`gateway.security.trust.allowed-hosts`). The probes are exempt.
	AllowedHosts []string
	// CORS, when AllowedOrigins is not empty, answers cross-origin requests
	// and preflights (`OPTIONS` with Access-Control-Request-Method) from
	// those origins (`gateway.rest.cors.*`). Off by default.
	CORS CORS
}

// CORS configures Cross-Origin Resource Sharing (the Fetch standard, "CORS
// protocol"), through fiber's cors middleware.
type CORS struct {
	// AllowedOrigins are exact origins (`https://app.example.com`) or "*".
	AllowedOrigins []string
	// AllowedMethods answer preflights; empty: GET, HEAD, POST, PATCH, DELETE.
	AllowedMethods []string
	// AllowedHeaders answer preflights; empty: the headers the API reads.
	AllowedHeaders []string
	// MaxAgeSeconds is how long a browser may cache a preflight answer; 0:
	// the browser's default.
	MaxAgeSeconds int
}

// Defaults of CORS.
var (
	DefaultCORSMethods = []string{fiber.MethodGet, fiber.MethodHead, fiber.MethodPost, fiber.MethodPatch, fiber.MethodDelete}
	DefaultCORSHeaders = []string{fiber.HeaderAuthorization, fiber.HeaderContentType, fiber.HeaderContentEncoding,
		fiber.HeaderAcceptEncoding, "X-Fluss-Request-Timeout", "X-Fluss-Invalid-Entries", "X-Fluss-Act-As", HeaderWritePositions, HeaderRequestID}
)

// Enabled reports whether CORS answers any origin.
func (c CORS) Enabled() bool { return len(c.AllowedOrigins) > 0 }

// corsMiddleware answers preflights and adds the CORS response headers for
// the allowed origins; nil when CORS is off.
func (g BrowserGuard) corsMiddleware() fiber.Handler {
	if !g.CORS.Enabled() {
		return nil
	}
	methods, headers := g.CORS.AllowedMethods, g.CORS.AllowedHeaders
	if len(methods) == 0 {
		methods = DefaultCORSMethods
	}
	if len(headers) == 0 {
		headers = DefaultCORSHeaders
	}
	return cors.New(cors.Config{
		AllowOrigins:  strings.Join(g.CORS.AllowedOrigins, ","),
		AllowMethods:  strings.Join(methods, ","),
		AllowHeaders:  strings.Join(headers, ","),
		ExposeHeaders: strings.Join([]string{HeaderRequestID, fiber.HeaderRetryAfter, fiber.HeaderWWWAuthenticate}, ","),
		MaxAge:        g.CORS.MaxAgeSeconds,
	})
}

// corsAllows reports whether origin is one of the CORS origins.
func (g BrowserGuard) corsAllows(origin string) bool {
	for _, o := range g.CORS.AllowedOrigins {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

func (g BrowserGuard) hostAllowed(host string) bool {
	if len(g.AllowedHosts) == 0 {
		return true
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	for _, a := range g.AllowedHosts {
		a = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
		if a == "*" || strings.EqualFold(a, name) {
			return true
		}
	}
	return false
}

// stateChanging are the methods that may change state.
func stateChanging(method string) bool {
	switch method {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return false
	}
	return true
}

// browserGuard refuses, with 403 `unauthorized`, a request whose Host is
// not allowed (AllowedHosts), and a state-changing request whose Origin is
// neither the request's own origin (same Host) nor a CORS origin: a page of
// another site cannot create or drop anything, even with a simple
// (preflight-free) request. Requests without Origin (non-browser clients)
// pass. The probes are exempt.
func (a *api) browserGuard(c *fiber.Ctx) error {
	g := a.opts.Browser
	if a.routes.isOpen(c.Path()) {
		return c.Next()
	}
	// Answers carry table rows and catalog data: no shared or browser
	// cache may keep them (RFC 9111 §5.2.2.5).
	if p := c.Path(); p != pathOpenAPI && !isDocsPath(p) {
		c.Set(fiber.HeaderCacheControl, "no-store")
	}
	host := string(c.Request().Host())
	if !g.hostAllowed(host) {
		return domain.Errorf(domain.KindUnauthorized,
			"Host %q is not an allowed host of this gateway (gateway.security.trust.allowed-hosts)", quoteHeader(host))
	}
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" || !stateChanging(c.Method()) {
		return c.Next()
	}
	if g.corsAllows(origin) {
		return c.Next()
	}
	u, err := url.Parse(origin)
	if err == nil && u.Host != "" && strings.EqualFold(u.Host, host) && g.hostAllowed(u.Host) {
		return c.Next()
	}
	return domain.Errorf(domain.KindUnauthorized,
		"Origin %q may not change state through this gateway: not the gateway's own origin nor in gateway.rest.cors.allowed-origins", quoteHeader(origin))
}
