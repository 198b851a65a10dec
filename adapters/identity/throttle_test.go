package identity

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

func testThrottle(max, perAddr int) (*loginThrottle, *time.Time) {
	now := time.Unix(1_000_000, 0)
	t := newLoginThrottle(max, perAddr, time.Minute)
	t.now = func() time.Time { return now }
	t.sketch = newFailureSketch(now)
	return t, &now
}

func TestLoginThrottleBudgets(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		failures  [][2]string // (addr, user) failures before the attempt
		addr      string
		user      string
		wantErr   bool
		wantDelay time.Duration
	}{
		{name: "fresh", addr: "1.1.1.1", user: "bob"},
		{name: "pair spent", failures: repeat(3, "1.1.1.1", "bob"), addr: "1.1.1.1", user: "bob", wantErr: true},
		{name: "pair spent elsewhere: delayed, not refused", failures: repeat(3, "1.1.1.1", "bob"), addr: "2.2.2.2", user: "bob", wantDelay: loginDelayBase},
		{name: "delay doubles", failures: repeat(5, "1.1.1.1", "bob"), addr: "2.2.2.2", user: "bob", wantDelay: 4 * loginDelayBase},
		{name: "another user on the address", failures: repeat(3, "1.1.1.1", "bob"), addr: "1.1.1.1", user: "carol"},
		{name: "address spent", failures: append(repeat(3, "1.1.1.1", "a"), append(repeat(3, "1.1.1.1", "b"), repeat(3, "1.1.1.1", "c")...)...), addr: "1.1.1.1", user: "d", wantErr: true},
		{name: "token mode: address budget", failures: repeat(9, "1.1.1.1", ""), addr: "1.1.1.1", wantErr: true},
		{name: "token mode: other address", failures: repeat(9, "1.1.1.1", ""), addr: "1.1.1.2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			th, _ := testThrottle(3, 9)
			for _, f := range tc.failures {
				th.failed(f[0], f[1])
			}
			delay, err := th.check(tc.addr, tc.user)
			if tc.wantErr {
				require.Error(t, err)
				de := domain.AsError(err)
				assert.Equal(t, domain.KindResourceExhausted, de.Kind)
				assert.Positive(t, de.RetryAfterMillis)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantDelay, delay)
		})
	}
}

func repeat(n int, addr, user string) [][2]string {
	out := make([][2]string, n)
	for i := range out {
		out[i] = [2]string{addr, user}
	}
	return out
}

// A flood of distinct keys (here 50,000 failures from 500 addresses, each
// at its address budget)
// evicts nothing: the attacker's pair stays spent, and an innocent user on
// an innocent address is neither refused nor delayed.
func TestLoginThrottleFloodEvictsNothing(t *testing.T) {
	t.Parallel()
	th, _ := testThrottle(10, 100)
	for range 10 {
		th.failed("1.1.1.1", "bob")
	}
	for a := range 500 {
		for u := range 100 {
			th.failed(fmt.Sprintf("10.%d.%d.1", a/256, a%256), fmt.Sprintf("u%d", u+a*100))
		}
	}
	_, err := th.check("1.1.1.1", "bob")
	assert.Error(t, err, "the pair is still spent")
	delay, err := th.check("3.3.3.3", "alice")
	assert.NoError(t, err)
	assert.Zero(t, delay)
}

func TestLoginThrottleForgetsAfterTwoWindows(t *testing.T) {
	t.Parallel()
	th, now := testThrottle(3, 9)
	for range 3 {
		th.failed("1.1.1.1", "bob")
	}
	*now = now.Add(90 * time.Second)
	_, err := th.check("1.1.1.1", "bob")
	assert.Error(t, err, "failures count for at least one window")
	*now = now.Add(2 * time.Minute)
	_, err = th.check("1.1.1.1", "bob")
	assert.NoError(t, err)
}

func TestThrottleAddrGroupsIPv6By64(t *testing.T) {
	t.Parallel()
	assert.Equal(t, throttleAddr("[2001:db8:1:2:aaaa::1]:5000"), throttleAddr("[2001:db8:1:2:bbbb::9]:6000"))
	assert.NotEqual(t, throttleAddr("[2001:db8:1:2::1]:5000"), throttleAddr("[2001:db8:1:3::1]:5000"))
	assert.Equal(t, "192.0.2.1", throttleAddr("192.0.2.1:1234"))
}

func TestLoginDelayEndsWithTheRequest(t *testing.T) {
	t.Parallel()
	th, _ := testThrottle(3, 9)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := th.delay(ctx, time.Second)
	assert.Equal(t, domain.KindCancelled, domain.KindOf(err))
}
