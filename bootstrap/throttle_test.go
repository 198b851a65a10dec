package bootstrap

import (
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// Issue 27, finding 1: ten wrong passwords for bob from one address do not
// lock bob out elsewhere (his right password is delayed, not refused);
// failures of one user on an address do not lock out the address's other
// users until the larger per-address budget is spent; a flood of over-long
// passwords from many addresses neither evicts a counter nor runs cheaper
// than a real guess.
func TestPasswordThrottleCannotBeTurnedAgainstUsers(t *testing.T) {
	rest, _ := startSecure(t, map[string]string{
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":                          "password",
		"FLUSS_GATEWAY__SECURITY__USERS":                                   cheapUsers(t, "alice", "pa55word", "bob", "b0bpass", "carol", "c4rol"),
		"FLUSS_GATEWAY__SECURITY__PASSWORD__FAILED_LOGIN_WINDOW":           "1h",
		"FLUSS_GATEWAY__SECURITY__PASSWORD__MAX_FAILED_LOGINS_PER_ADDRESS": "40",
		"FLUSS_GATEWAY__SECURITY__PASSWORD__CACHE_TTL":                     "0",
	})
	url := "http://" + rest.Addr().String() + "/v1/clusters"
	basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
	attacker, bobs, office := clientFrom("127.0.0.11"), clientFrom("127.0.0.12"), clientFrom("127.0.0.13")

	// 10 wrong tries for bob from the attacker's address spend only that
	// pair's budget (the default of 10).
	for range 10 {
		status, _, _ := send(t, attacker, "GET", url, "Authorization", basic("bob", "guess"))
		require.Equal(t, 401, status)
	}
	status, _, body := send(t, attacker, "GET", url, "Authorization", basic("bob", "b0bpass"))
	assert.Equal(t, 429, status, "the guesser's own pair is spent: %s", body)
	started := time.Now()
	status, _, body = send(t, bobs, "GET", url, "Authorization", basic("bob", "b0bpass"))
	assert.Equal(t, 200, status, "bob's right password from his address is accepted: %s", body)
	assert.Less(t, time.Since(started), 5*time.Second, "delayed at most by the bounded delay")

	// 10 failures of alice on the office address leave carol in.
	for range 10 {
		status, _, _ := send(t, office, "GET", url, "Authorization", basic("alice", "typo"))
		require.Equal(t, 401, status)
	}
	status, _, body = send(t, office, "GET", url, "Authorization", basic("carol", "c4rol"))
	assert.Equal(t, 200, status, "one user's typos do not lock out the address: %s", body)

	// A flood of over-long passwords for many names from 20 addresses:
	// each is counted (the flooding addresses reach their own budget),
	// the counters of the attacker's pair survive, and bob still gets in.
	long := strings.Repeat("x", 100)
	var wg sync.WaitGroup
	for a := range 20 {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			cl := clientFrom(fmt.Sprintf("127.0.1.%d", c+1))
			for i := range 45 {
				status, _, _ := send(t, cl, "GET", url, "Authorization", basic(fmt.Sprintf("u%d-%d", c, i), long))
				if i < 40 {
					assert.Equal(t, 401, status)
				} else {
					assert.Equal(t, 429, status, "the flooding address spent its budget")
				}
			}
		}(a)
	}
	wg.Wait()
	status, _, body = send(t, attacker, "GET", url, "Authorization", basic("bob", "b0bpass"))
	assert.Equal(t, 429, status, "the flood evicted no counter: %s", body)
	status, _, body = send(t, bobs, "GET", url, "Authorization", basic("bob", "b0bpass"))
	assert.Equal(t, 200, status, body)
}

// Issue 27, finding 2: token mode is throttled per address like password
// mode: wrong tokens spend the address's budget, then 429 with Retry-After;
// another address is not affected.
func TestTokenModeIsThrottled(t *testing.T) {
	rest, _ := startSecure(t, map[string]string{
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":                          "token",
		"FLUSS_GATEWAY__SECURITY__TOKENS":                                  "tok-alice-0123456789abcdef:alice",
		"FLUSS_GATEWAY__SECURITY__PASSWORD__MAX_FAILED_LOGINS_PER_ADDRESS": "5",
	})
	url := "http://" + rest.Addr().String() + "/v1/clusters"
	guesser, other := clientFrom("127.0.0.21"), clientFrom("127.0.0.22")
	for i := range 5 {
		status, _, _ := send(t, guesser, "GET", url, "Authorization", fmt.Sprintf("Bearer g%d", i))
		require.Equal(t, 401, status)
	}
	status, hdr, body := send(t, guesser, "GET", url, "Authorization", "Bearer tok-alice-0123456789abcdef")
	assert.Equal(t, 429, status, body)
	assert.NotEmpty(t, hdr.Get("Retry-After"))
	status, _, body = send(t, other, "GET", url, "Authorization", "Bearer tok-alice-0123456789abcdef")
	assert.Equal(t, 200, status, body)
}

// cheapUsers is a gateway.security.users value with bcrypt hashes of the
// lowest cost for the (user, password) pairs: start-up and floods stay short
// on a loaded machine; the work per guess is what the tests compare.
func cheapUsers(t *testing.T, pairs ...string) string {
	t.Helper()
	var users []string
	for i := 0; i+1 < len(pairs); i += 2 {
		h, err := bcrypt.GenerateFromPassword([]byte(pairs[i+1]), bcrypt.MinCost)
		require.NoError(t, err)
		users = append(users, pairs[i]+":bcrypt:"+string(h))
	}
	return strings.Join(users, ",")
}
