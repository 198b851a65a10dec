// Package identity authenticates HTTP callers behind the domain.Identity port.
//
// One authenticator exists per method of `gateway.security.authentication`:
//
//   - trust (default): no credentials, anonymous principal, loopback clients
//     only unless `gateway.security.trust.allow-non-loopback` is set;
//   - password: HTTP Basic against bcrypt hashes (`gateway.security.users`);
//   - token: opaque bearer tokens kept as SHA-256 digests
//     (`gateway.security.tokens`);
//   - trusted-header: the principal named by a header set by a fronting proxy
//     (`gateway.security.trusted-header.*`), accepted only from trusted
//     source addresses;
//   - jwt: OIDC/JWT bearer tokens verified against a JWKS
//     (`gateway.security.jwt.*`);
//   - mtls: the verified TLS client certificate (`gateway.security.mtls.*`).
//
// The first four match the official Fluss gateway's methods and key names;
// jwt, mtls and the keys marked as extensions in keys.go are additive.
//
// Every authentication failure is a *domain.Error of kind
// KindUnauthenticated whose message never contains the presented credential.
// Its Cause is one of the sentinels ErrNoCredentials, ErrMalformedCredentials,
// ErrInvalidCredentials or ErrSourceNotAllowed, which ChallengeFor uses to
// build the WWW-Authenticate header (RFC 7617, RFC 6750).
//
// ActAs resolves the optional act-as header once a caller is authenticated.
package identity
