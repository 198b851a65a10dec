package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGuardValidationNamesKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, contents, want string
	}{
		{"short token key", "gateway.security.token-key: short\n", "gateway.security.token-key must have at least 32 bytes"},
		{"token key ok", "gateway.security.token-key: 0123456789abcdef0123456789abcdef\n", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadFile(t, tc.contents)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestTokenKeyRedactedInDump(t *testing.T) {
	t.Parallel()
	cfg, err := loadFile(t, "gateway.security.token-key: 0123456789abcdef0123456789abcdef\n")
	require.NoError(t, err)
	assert.Equal(t, "0123456789abcdef0123456789abcdef", cfg.Security.Guard.TokenKey.Reveal())
	var dump string
	for _, e := range globalEntries {
		if e.key == KeyTokenKey {
			dump = e.render(cfg)
		}
	}
	assert.Equal(t, Redacted, dump)
}

// guardSample gives TestEveryKeyHasAWorkingEnvironmentVariable a file and an
// environment value for the keys of guard.go, nil for other keys.
func guardSample(key string) []string {
	switch key {
	case KeyTokenKey:
		return []string{"file-value-0123456789abcdef012345", "env-value-0123456789abcdef0123456"}
	}
	return nil
}
