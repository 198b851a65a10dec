//go:build integration

package integration

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdempotencyKeySIGKILL: a gateway process serving 16 concurrent keyed
// writes (500 rows each, each key its own) is killed with SIGKILL while they
// are in flight, at a different moment each round; every request is then
// retried with its key on an in-process instance until it has an answer.
// Whatever the moment of the kill (before the claim, between the claim and
// the rows, between the rows and the answer, after the answer), the peer
// client finds no row twice, the rows of every request answered with
// successes exactly once, and every request's answer is either those
// verdicts or the documented outcome_unknown (whose rows may have landed in
// part: a killed write may have reached some buckets and not others).
func TestIdempotencyKeySIGKILL(t *testing.T) {
	bootstrap := wrBootstrap(t)
	bin := filepath.Join(t.TempDir(), "fluss-gateway")
	build := exec.Command("go", "build", "-o", bin, "./bootstrap/cmd/gateway")
	build.Dir = filepath.Join("..", "..")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	survivor := startIdemGateway(t, idemOptions{})
	db := gwName("gw_idem_kill")
	rec := idemLogTable(t, survivor, db, "events")
	const rounds, clients, rows = 4, 16, 500
	var unknown, fresh int
	succeeded := map[string]bool{} // tags of the requests answered with their successes
	unknownTags := map[string]bool{}
	for round := range rounds {
		// A free port each round: a fixed one (44080 before) lies in the
		// kernel's ephemeral range and was once taken by an outgoing
		// connection, so the process could not listen and never got ready.
		listen := "127.0.0.1:" + envOr("IDEM_KILL_GATEWAY_PORT", freePort(t))
		logPath := filepath.Join(t.TempDir(), fmt.Sprintf("gateway-round-%d.log", round))
		logFile, err := os.Create(logPath)
		require.NoError(t, err)
		cmd := exec.Command(bin)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.Env = append(os.Environ(),
			"FLUSS_GATEWAY__CLUSTERS=default",
			"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS="+bootstrap,
			"FLUSS_GATEWAY__REST__LISTEN="+listen,
			"FLUSS_GATEWAY__METRICS__ENABLED=false",
			"FLUSS_GATEWAY__IDEMPOTENCY__DATABASE="+idemLedger.Database,
			"FLUSS_GATEWAY__IDEMPOTENCY__TABLE="+idemLedger.Table,
		)
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		victim := &idemGateway{t: t, base: "http://" + listen + "/v1/clusters/default"}
		if !waitReady(listen, exited, 30*time.Second) {
			_ = cmd.Process.Kill()
			<-exited
			logged, _ := os.ReadFile(logPath)
			require.FailNow(t, "the gateway process did not get ready", "round %d on %s; its output:\n%s", round, listen, cut(string(logged), 4000))
		}

		keys := make([]string, clients)
		bodies := make([][]byte, clients)
		var wg sync.WaitGroup
		for c := range clients {
			keys[c] = fmt.Sprintf("kill-%d-%d-%s", round, c, db)
			bodies[c] = idemBody((round*clients+c)*rows, rows, fmt.Sprintf("r%dc%d", round, c))
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = victim.post(rec, bodies[c], "Idempotency-Key", keys[c], "X-Fluss-Request-Timeout", "3s")
			}()
		}
		// Kill at a different moment each round: 5 ms to 125 ms in.
		time.Sleep(time.Duration(5+40*round) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		<-exited
		_ = logFile.Close()
		wg.Wait()

		answers := make([]idemAnswer, clients)
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for attempt := 0; attempt < 40; attempt++ {
					ans, err := survivor.post(rec, bodies[c], "Idempotency-Key", keys[c], "X-Fluss-Request-Timeout", "10s")
					if err == nil && ans.status != http.StatusConflict && ans.status < 500 {
						answers[c] = ans
						return
					}
					time.Sleep(250 * time.Millisecond)
				}
			}()
		}
		wg.Wait()
		for c, ans := range answers {
			require.Equal(t, http.StatusOK, ans.status, "round %d request %d: %s", round, c, ans.body)
			m := ans.json(t)
			switch {
			case m["success_count"] == float64(rows):
				fresh++
				succeeded[fmt.Sprintf("r%dc%d", round, c)] = true
			case strings.Contains(string(ans.body), "outcome_unknown"):
				unknown++
				unknownTags[fmt.Sprintf("r%dc%d", round, c)] = true
				assert.EqualValues(t, rows, m["error_count"])
			default:
				t.Errorf("round %d request %d: unexpected answer %s", round, c, cut(string(ans.body), 300))
			}
		}
	}
	counts := map[string]int{}
	ids := map[float64]int{}
	for _, r := range peerScan(t, db, "events") {
		row := r["row"].(map[string]any)
		counts[row["tag"].(string)]++
		ids[row["id"].(float64)]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("row %v written %d times", id, n)
		}
	}
	for tag := range succeeded {
		assert.Equal(t, rows, counts[tag], "request %s was answered with successes: its rows once", tag)
	}
	for tag, n := range counts {
		assert.LessOrEqual(t, n, rows, "request %s", tag)
	}
	landedUnknown := 0
	for tag := range unknownTags {
		if counts[tag] > 0 {
			landedUnknown++
		}
	}
	t.Logf("%d requests killed in flight: %d answered with their verdicts on retry, %d outcome_unknown (of which %d had rows landed); %d requests' rows landed, %d rows, none twice",
		rounds*clients, fresh, unknown, landedUnknown, len(counts), len(ids))
}

// waitReady polls the gateway's /ready until it answers 200 (true), the
// process exits or the wait runs out (false).
func waitReady(listen string, exited <-chan struct{}, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		resp, err := http.Get("http://" + listen + "/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// freePort returns a port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
