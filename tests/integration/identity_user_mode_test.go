//go:build integration

package integration

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	gwboot "github.com/fluss-gateway/fluss-gateway-go/bootstrap"
)

// TestUserModeRefusedByFluss starts the whole gateway process (Main) with a
// cluster in identity mode user against the real Fluss SASL listener (0.9.1
// and 1.0-SNAPSHOT: tests/run.sh runs it on both): the start probe
// authenticates as the service account with another authorization id; both
// versions answer AUTHENTICATE_EXCEPTION (46) because they accept no
// authorization id different from the username (impersonation is
// apache/fluss PR #3857, still open at the 1.0-SNAPSHOT commit 545c55390),
// and the gateway refuses to start saying so, without printing a credential.
func TestUserModeRefusedByFluss(t *testing.T) {
	sasl := saslBootstrap(t)
	var stdout, stderr bytes.Buffer
	code := gwboot.Main(nil, []string{
		"FLUSS_GATEWAY__REST__LISTEN=127.0.0.1:0",
		"FLUSS_GATEWAY__METRICS__ENABLED=false",
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION=token",
		"FLUSS_GATEWAY__SECURITY__TOKENS=tok-alice-0123456789abcdef:alice",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS=" + sasl,
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__IDENTITY_MODE=user",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__ACCOUNT=admin",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECTION__SERVICE__SECRET=admin-secret",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__CONNECT_TIMEOUT=10s",
	}, &stdout, &stderr)
	assert.Equal(t, gwboot.ExitFailed, code, "stderr: %s", stderr.String())
	out := stderr.String()
	assert.Contains(t, out, "fluss-gateway failed to start")
	assert.Contains(t, out, "cluster default")
	assert.Contains(t, out, "identity mode `user` cannot start")
	assert.Contains(t, out, "the Fluss cluster does not accept SASL authorization ids")
	assert.Contains(t, out, "AUTHENTICATE_EXCEPTION (46)")
	assert.Contains(t, out, "different from username", "the server's own reason is quoted")
	assert.Contains(t, out, "PR #3857")
	assert.NotContains(t, out, "admin-secret")
	assert.NotContains(t, out, "tok-alice-0123456789abcdef")
	t.Logf("Fluss %s: startup refusal: %s", flussVersion(), out)
}
