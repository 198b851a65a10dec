//go:build faults

// Fault tests against a real local Fluss cluster of three tablet servers
// (deployments/local/fluss-cluster.sh with FLUSS_TABLET_SERVERS=3), started
// and stopped by tests/faults/run.sh on ports of its own. The tests kill
// tablet servers with SIGKILL, restart them from the command line they were
// started with, and freeze them with SIGSTOP; they read what landed with the
// independent peer client (tests/peer).
//
//	bash tests/faults/run.sh            # what `make test-faults` runs
//
// Environment (run.sh sets it): FLUSS_BOOTSTRAP, FLUSS_STATE_DIR (the
// cluster's state directory: pid files in run/, logs in log/), FLUSS_PEER.
// Without them the tests skip, or fail when FLUSS_FAULTS_REQUIRED=1.
package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
)

// faultEnv is the cluster under test.
type faultEnv struct {
	bootstrap string
	state     string
	peer      string
	servers   []*proc // tablet servers ts0..tsN-1
	coord     *proc
}

var (
	envOnce sync.Once
	envVal  *faultEnv
	envErr  error
)

// needCluster returns the cluster of three tablet servers, skipping the test
// when the environment does not name one (failing it when
// FLUSS_FAULTS_REQUIRED=1).
func needCluster(t *testing.T) *faultEnv { t.Helper(); return needServers(t, 3) }

// needServers is needCluster for a cluster of at least n tablet servers.
func needServers(t *testing.T, n int) *faultEnv {
	t.Helper()
	boot, state := os.Getenv("FLUSS_BOOTSTRAP"), os.Getenv("FLUSS_STATE_DIR")
	if boot == "" || state == "" {
		if os.Getenv("FLUSS_FAULTS_REQUIRED") == "1" {
			t.Fatal("FLUSS_FAULTS_REQUIRED=1 but FLUSS_BOOTSTRAP or FLUSS_STATE_DIR is not set")
		}
		t.Skip("FLUSS_BOOTSTRAP/FLUSS_STATE_DIR not set; run tests/faults/run.sh")
	}
	envOnce.Do(func() {
		e := &faultEnv{bootstrap: boot, state: state, peer: os.Getenv("FLUSS_PEER")}
		if e.peer == "" {
			_, file, _, _ := runtime.Caller(0)
			e.peer = filepath.Join(filepath.Dir(file), "..", "peer", "peer.sh")
		}
		files, _ := filepath.Glob(filepath.Join(state, "run", "ts*.pid"))
		for i := 0; i < len(files); i++ {
			e.servers = append(e.servers, newProc(state, fmt.Sprintf("ts%d", i)))
		}
		e.coord = newProc(state, "cs")
		envVal = e
	})
	require.NoError(t, envErr)
	require.GreaterOrEqual(t, len(envVal.servers), n, "tablet server pid files in %s/run", state)
	return envVal
}

// ---------------------------------------------------------------------------
// Processes
// ---------------------------------------------------------------------------

// proc is one server process of the cluster, found through the pid file the
// cluster script writes. A process the test relaunched is its child: the
// test reaps it when killing it again.
type proc struct {
	name    string
	pidFile string
	logFile string // JVM output (.out)
	appLog  string // log4j file (.log)

	mu   sync.Mutex
	argv []string
	env  []string
	dir  string
	cmd  *exec.Cmd     // set when relaunched by this test process
	done chan struct{} // closed when cmd was reaped
}

func newProc(state, name string) *proc {
	return &proc{
		name: name, pidFile: filepath.Join(state, "run", name+".pid"),
		logFile: filepath.Join(state, "log", name+".out"),
		appLog:  filepath.Join(state, "log", name+".log"),
	}
}

// registrations counts the "Registered tablet server" lines of the server's
// log (one per successful start).
func (p *proc) registrations() int {
	b, _ := os.ReadFile(p.appLog)
	return bytes.Count(b, []byte("Registered tablet server"))
}

// waitRegistered waits until the server logged one more registration than
// before, failing early if the process died.
func (p *proc) waitRegistered(before int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if p.registrations() > before {
			return nil
		}
		if !p.alive() {
			return fmt.Errorf("%s died after restart (see %s)", p.name, p.logFile)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s did not register within %s (see %s)", p.name, timeout, p.appLog)
}

func (p *proc) pid() int {
	b, err := os.ReadFile(p.pidFile)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// alive reports whether the process exists and is not a zombie.
func (p *proc) alive() bool {
	pid := p.pid()
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	st := s[i+2]
	return st != 'Z' && st != 'X'
}

// capture reads the command line, environment and working directory of the
// running process, for restart.
func (p *proc) capture() error {
	pid := p.pid()
	if pid <= 0 {
		return fmt.Errorf("%s: no pid", p.name)
	}
	read := func(f string) ([]string, error) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
		if err != nil {
			return nil, err
		}
		parts := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		return parts, nil
	}
	argv, err := read("cmdline")
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	env, err := read("environ")
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	dir, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.mu.Lock()
	p.argv, p.env, p.dir = argv, env, dir
	p.mu.Unlock()
	return nil
}

func (p *proc) signal(sig syscall.Signal) error {
	pid := p.pid()
	if pid <= 0 {
		return fmt.Errorf("%s: no pid", p.name)
	}
	return syscall.Kill(pid, sig)
}

// kill sends SIGKILL (after capturing the command line) and waits until the
// process is gone.
func (p *proc) kill() error {
	if err := p.capture(); err != nil {
		return err
	}
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if done != nil {
			select {
			case <-done:
				return nil
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if !p.alive() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s: still alive 10 s after SIGKILL", p.name)
}

// restart relaunches the captured command line with the same environment
// and working directory, output appended to the server's .out file, and
// updates the pid file (so the cluster script's stop finds it).
func (p *proc) restart() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.argv) == 0 {
		return fmt.Errorf("%s: no captured command line", p.name)
	}
	out, err := os.OpenFile(p.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	fmt.Fprintf(out, "\n===== restarted by tests/faults at %s =====\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env, cmd.Dir = p.env, p.dir
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: a ^C to the test must not kill the server
	// behind the cluster script's back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: restart: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
	return os.WriteFile(p.pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
}

// ---------------------------------------------------------------------------
// Cluster health
// ---------------------------------------------------------------------------

// tabletServersUp returns the ids of the tablet servers the cluster lists.
func tabletServersUp(ctx context.Context, bootstrap string) ([]int32, error) {
	c, err := rpc.NewClient(rpc.Config{BootstrapServers: []string{bootstrap}, RequestTimeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	cl, err := c.RefreshCluster(ctx)
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, n := range cl.TabletServers {
		ids = append(ids, n.ID)
	}
	return ids, nil
}

// waitServers waits until n tablet servers are registered.
func (e *faultEnv) waitServers(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last []int32
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		last, lastErr = tabletServersUp(ctx, e.bootstrap)
		cancel()
		if lastErr == nil && len(last) >= n {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("tablet servers listed after %s: %v (err %v); want %d", timeout, last, lastErr, n)
}

// heal resumes stopped servers and restarts dead ones, then waits until all
// tablet servers are registered again. Tests call it from t.Cleanup.
func (e *faultEnv) heal(t *testing.T) {
	t.Helper()
	for _, p := range append([]*proc{e.coord}, e.servers...) {
		_ = p.signal(syscall.SIGCONT)
	}
	restarted := false
	if !e.coord.alive() {
		time.Sleep(11 * time.Second)
		if err := e.coord.restart(); err != nil {
			t.Errorf("heal: %v", err)
		}
		restarted = true
	}
	for _, p := range e.servers {
		if !p.alive() {
			// Its ZooKeeper session must expire before it can register again.
			time.Sleep(11 * time.Second)
			before := p.registrations()
			if err := p.restart(); err != nil {
				t.Errorf("heal: %v", err)
			} else if err := p.waitRegistered(before, 60*time.Second); err != nil {
				t.Errorf("heal: %v", err)
			}
			restarted = true
		}
	}
	e.waitServers(t, len(e.servers), 90*time.Second)
	if restarted {
		time.Sleep(5 * time.Second)
	}
}

// ---------------------------------------------------------------------------
// Peer client
// ---------------------------------------------------------------------------

func (e *faultEnv) peerTry(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{e.peer, "--bootstrap", e.bootstrap}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return append(out, stderr.Bytes()...), err
	}
	return out, nil
}

func (e *faultEnv) peerRun(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := e.peerTry(ctx, args...)
	require.NoError(t, err, "peer %v: %s", args, out)
	return out
}

// database creates a fresh database and drops it when the test ends (unless
// FLUSS_FAULTS_KEEP=1, to inspect it).
func (e *faultEnv) database(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano()%1_000_000_000)
	e.peerRun(t, "create-database", name)
	t.Cleanup(func() {
		if os.Getenv("FLUSS_FAULTS_KEEP") == "1" {
			t.Logf("keeping database %s", name)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = e.peerTry(ctx, "drop-database", name)
	})
	return name
}

// createTable creates a table with replication factor 3.
func (e *faultEnv) createTable(t *testing.T, db, table string, pk bool, buckets int) {
	t.Helper()
	e.createTableRF(t, db, table, pk, buckets, 3)
}

// createTableRF creates a table {id BIGINT NOT NULL, worker INT, payload
// STRING} with the given replication factor.
func (e *faultEnv) createTableRF(t *testing.T, db, table string, pk bool, buckets, rf int) {
	t.Helper()
	schema := `[{"name":"id","type":"bigint NOT NULL"},{"name":"worker","type":"int"},{"name":"payload","type":"string"}]`
	args := []string{"create-table", db, table, "--schema", schema, "--buckets", strconv.Itoa(buckets),
		"--properties", fmt.Sprintf(`{"table.replication.factor":"%d"}`, rf)}
	if pk {
		args = append(args, "--primary-key", "id")
	}
	e.peerRun(t, args...)
}

// scanned is what the peer read from a table's log or changelog.
type scanned struct {
	// inserts counts +I/+U/+A records per id (more than one means the row
	// was applied more than once).
	inserts map[int64]int
	records int
	byType  map[string]int
	// byIDType counts records per id and change type; notes counts +I/+U
	// records whose `note` column is "n-<id>" (the mixed workload's partial
	// update).
	byIDType map[int64]map[string]int
	notes    map[int64]int
}

// scanIDs scans the whole log (changelog of a primary-key table) with the
// peer client.
func (e *faultEnv) scanIDs(t *testing.T, db, table string) scanned {
	t.Helper()
	// Right after the last restart a bucket may still be without a leader:
	// the peer then fails at once ("No leader found"); scan again.
	for attempt := 1; ; attempt++ {
		s, retry, err := e.scanOnce(db, table)
		if err == nil {
			return s
		}
		if !retry || attempt == 6 {
			require.NoError(t, err)
		}
		t.Logf("peer scan attempt %d: %v; again in 5 s", attempt, err)
		time.Sleep(5 * time.Second)
	}
}

// scanOnce runs one peer scan; retry says whether the failure was a bucket
// without a leader.
func (e *faultEnv) scanOnce(db, table string) (scanned, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", e.peer, "--bootstrap", e.bootstrap, "scan", db, table, "--scan-timeout", "120")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return scanned{}, false, err
	}
	if err := cmd.Start(); err != nil {
		return scanned{}, false, err
	}
	s := scanned{inserts: make(map[int64]int), byType: make(map[string]int), byIDType: make(map[int64]map[string]int), notes: make(map[int64]int)}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var firstErr string
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var r struct {
			ChangeType string `json:"change_type"`
			Error      string `json:"error"`
			Row        struct {
				ID   int64   `json:"id"`
				Note *string `json:"note"`
			} `json:"row"`
		}
		if err := json.Unmarshal(line, &r); err != nil || r.Error != "" {
			if firstErr == "" {
				firstErr = string(line)
			}
			continue
		}
		s.records++
		s.byType[r.ChangeType]++
		m := s.byIDType[r.Row.ID]
		if m == nil {
			m = make(map[string]int, 1)
			s.byIDType[r.Row.ID] = m
		}
		m[r.ChangeType]++
		if r.Row.Note != nil && *r.Row.Note == "n-"+strconv.FormatInt(r.Row.ID, 10) && (r.ChangeType == "+U" || r.ChangeType == "+I") {
			s.notes[r.Row.ID]++
		}
		switch r.ChangeType {
		case "+I", "+U", "+A":
			s.inserts[r.Row.ID]++
		}
	}
	werr := cmd.Wait()
	if werr != nil || firstErr != "" {
		msg := firstErr + " " + stderr.String()
		return s, strings.Contains(msg, "No leader found") || strings.Contains(msg, "LEADER_NOT_AVAILABLE") || strings.Contains(msg, "NotLeaderOrFollower"),
			fmt.Errorf("peer scan: %v: %s", werr, truncate(msg, 600))
	}
	return s, false, nil
}
