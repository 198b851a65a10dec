package bootstrap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
)

// TestSealerKeySharedByReplicas: two processes configured with the same
// gateway.security.token-key accept each other's tokens; without a key each
// accepts only its own.
func TestSealerKeySharedByReplicas(t *testing.T) {
	t.Parallel()
	withKey := &config.Config{}
	withKey.Security.Guard.TokenKey = config.NewSecret("0123456789abcdef0123456789abcdef")
	a, err := newSealer(withKey)
	require.NoError(t, err)
	b, err := newSealer(withKey)
	require.NoError(t, err)
	tok := a.Seal("page/v1", "scope", []byte("x"))
	got, err := b.Open("page/v1", "scope", tok)
	require.NoError(t, err, "a replica with the same key accepts the token")
	assert.Equal(t, "x", string(got))

	r1, err := newSealer(&config.Config{})
	require.NoError(t, err)
	r2, err := newSealer(&config.Config{})
	require.NoError(t, err)
	_, err = r2.Open("page/v1", "scope", r1.Seal("page/v1", "scope", []byte("x")))
	assert.Error(t, err, "random keys differ per process")

	short := &config.Config{}
	short.Security.Guard.TokenKey = config.NewSecret("short")
	_, err = newSealer(short)
	assert.Error(t, err)
}
