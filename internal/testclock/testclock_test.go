package testclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestClock(t *testing.T) {
	c := New()
	start := c.Now()
	assert.Equal(t, start, c.Now(), "the clock stands still")
	c.Advance(90 * time.Second)
	assert.Equal(t, start.Add(90*time.Second), c.Now())
}
