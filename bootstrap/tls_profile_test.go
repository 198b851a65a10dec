package bootstrap

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTLSProfileServesAndCutsStalledHandshakes: the official named TLS
// profile keys (gateway.tls.profiles, gateway.tls.profile.<name>.*,
// gateway.rest.tls.profile) serve HTTPS with the profile's certificate, and
// a client that connects but never sends a ClientHello is disconnected
// after the profile's handshake-timeout, not held open.
func TestTLSProfileServesAndCutsStalledHandshakes(t *testing.T) {
	pki := newTestPKI(t)
	certFile, keyFile := pki.serverFiles("gateway-profile")
	rest, _ := startSecure(t, map[string]string{
		"FLUSS_GATEWAY__TLS__PROFILES":                           "public",
		"FLUSS_GATEWAY__TLS__PROFILE__PUBLIC__CERTIFICATE_FILE":  certFile,
		"FLUSS_GATEWAY__TLS__PROFILE__PUBLIC__PRIVATE_KEY_FILE":  keyFile,
		"FLUSS_GATEWAY__TLS__PROFILE__PUBLIC__HANDSHAKE_TIMEOUT": "300ms",
		"FLUSS_GATEWAY__REST__TLS__PROFILE":                      "public",
	})
	require.Equal(t, "https", rest.Scheme())
	status, _, body := send(t, pki.client(""), "GET", "https://"+rest.Addr().String()+"/v1/clusters")
	assert.Equal(t, 200, status, body)

	conn, err := net.Dial("tcp", rest.Addr().String())
	require.NoError(t, err)
	defer func() { _ = conn.Close() }()
	start := time.Now()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = conn.Read(make([]byte, 1))
	took := time.Since(start)
	require.Error(t, err, "the server closes the stalled connection")
	var ne net.Error
	assert.False(t, errors.As(err, &ne) && ne.Timeout(), "closed by the server (%v), not by the client's own 5 s deadline", err)
	assert.Less(t, took, 3*time.Second, "cut off after the 300 ms handshake timeout")
}
