package defaults

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPositive(t *testing.T) {
	cases := []struct {
		name    string
		v, want time.Duration
	}{
		{"set", 3 * time.Second, 3 * time.Second},
		{"zero takes the default", 0, time.Minute},
		{"negative takes the default", -time.Second, time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Positive(tc.v, time.Minute))
		})
	}
	assert.Equal(t, 7, Positive(7, 64))
	assert.Equal(t, int64(64), Positive(int64(0), 64))
}
