package bootstrap

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"
	"go.uber.org/fx/fxtest"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/memory"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The CPU one lookup or prefix-lookup request costs the gateway beside the
// Fluss round trip (issue 22, "Lookups"): the whole process as bootstrap
// wires it (fx graph with the default configuration: request id, no
// authentication, the access log through the process logger's JSON handler,
// REST metrics on the Prometheus provider, otelfiber with tracing off, the
// admission budgets, the memory budget, rate limits), served on a real
// listener on 127.0.0.1 and driven by a lean keep-alive client over raw
// sockets (16 connections, like the benchmark's 16 concurrent callers). The
// cluster's lookup port is a fake that answers from prepared rows, so Fluss is
// out of the picture. Reported per request:
//
//   - cpu-ns/req: the process's user+system CPU (getrusage), gateway and
//     client together;
//
//   - client-cpu-ns/req (BenchmarkRequestCostClient): the same client against
//     a canned answer on a bare socket, the part of cpu-ns/req that is not
//     the gateway's.
//
//     go test -run '^$' -bench 'RequestCost' -benchtime 20000x ./bootstrap/
func BenchmarkRequestCost(b *testing.B) {
	for _, sc := range requestCostScenarios() {
		b.Run(sc.name, func(b *testing.B) {
			base := startCostGateway(b)
			runCostClients(b, base, sc.request(base), sc.check)
		})
	}
}

// BenchmarkRequestCostClient is the client's own share of
// BenchmarkRequestCost: the same requests answered by a bare socket with the
// answer the gateway gives.
func BenchmarkRequestCostClient(b *testing.B) {
	for _, sc := range requestCostScenarios() {
		b.Run(sc.name, func(b *testing.B) {
			answer := cannedAnswer(b, sc)
			addr := serveCanned(b, answer)
			runCostClients(b, addr, sc.request(addr), sc.check)
		})
	}
}

const (
	costClients  = 16
	costDatabase = "bench"
	// costPrefixTable has primary key (k, name) and bucket key k,
	// costKeyTable primary key k (tests/bench-native's pfx_1 and gw_pk_1).
	costPrefixTable = "pfx"
	costKeyTable    = "pk"
	costRows        = 1 << 16
)

type costScenario struct {
	name    string
	request func(host string) []byte
	check   func(body []byte) bool
}

func requestCostScenarios() []costScenario {
	return []costScenario{
		{name: "prefix16", request: func(host string) []byte {
			return costRequest(host, costPrefixTable, "prefix-lookup", costBody(`{"prefix_columns":["k"],"prefixes":[`, 16))
		}, check: func(body []byte) bool { return bytes.Count(body, []byte(`"rows":[`)) == 16 }},
		{name: "lookup128", request: func(host string) []byte {
			return costRequest(host, costKeyTable, "lookup", costBody(`{"keys":[`, 128))
		}, check: func(body []byte) bool { return bytes.Count(body, []byte(`"input_index"`)) == 128 }},
	}
}

// costBody lists n keys {"k":id}, every fourth one missing (as
// tools/load's lookup mode asks).
func costBody(head string, n int) []byte {
	b := []byte(head)
	for j := range n {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"k":`...)
		b = strconv.AppendInt(b, costID(j), 10)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

func costID(j int) int64 {
	if j%4 == 3 {
		return 2_000_000_000 + int64(j)
	}
	return int64(j*7919) % costRows
}

func costRequest(host, table, route string, body []byte) []byte {
	// The headers tools/load's lookup mode sends (net/http's client, with
	// the benchmark's -timeout 30s).
	head := fmt.Sprintf("POST /v1/clusters/default/databases/%s/tables/%s/records/%s HTTP/1.1\r\n"+
		"Host: %s\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: %d\r\nContent-Type: application/json\r\n"+
		"X-Fluss-Request-Timeout: 30000\r\n\r\n",
		costDatabase, table, route, host, len(body))
	return append([]byte(head), body...)
}

// costColumns are the benchmark table's columns (tests/bench-native's pfx
// table: primary key (k, name), bucket key k).
func costColumns() []domain.Column {
	col := func(name string, root domain.TypeRoot, nullable bool) domain.Column {
		return domain.Column{Name: name, Type: domain.DataType{Root: root, Nullable: nullable}}
	}
	amount := col("amount", domain.TypeDecimal, true)
	amount.Type.Precision, amount.Type.Scale = 18, 2
	ts := col("ts", domain.TypeTimestampLTZ, true)
	ts.Type.Precision = 3
	cols := []domain.Column{
		col("k", domain.TypeBigInt, false), col("name", domain.TypeString, false), amount,
		col("qty", domain.TypeInteger, true), col("price", domain.TypeDouble, true), col("flag", domain.TypeBoolean, true),
		col("day", domain.TypeDate, true), ts, col("note", domain.TypeString, true), col("raw", domain.TypeBytes, true),
	}
	for i := range cols {
		cols[i].ID = int32(i)
	}
	return cols
}

func costRow(k int64) []domain.Datum {
	s := strconv.FormatInt(k, 10)
	return []domain.Datum{
		{I64: k}, {Bytes: []byte("user-" + s)}, {I64: k * 101}, {I64: k % 100_000}, {F64: float64(k) / 4},
		{I64: k & 1}, {I64: 19_000 + k%1000}, {I64: 1_700_000_000_000 + k}, {Bytes: []byte("payload-" + s + "-0123456789abcdef0123456789abcdef")},
		{Bytes: []byte("0123456789abcdef")},
	}
}

// costLookup is the fake lookup port: every id below costRows has one row
// (prepared once), others none.
type costLookup struct {
	rows [][]domain.Datum
}

func newCostLookup() *costLookup {
	l := &costLookup{rows: make([][]domain.Datum, costRows)}
	for k := range costRows {
		l.rows[k] = costRow(int64(k))
	}
	return l
}

func (l *costLookup) row(key []domain.Datum) []domain.Datum {
	if k := key[0].I64; k >= 0 && k < costRows {
		return l.rows[k]
	}
	return nil
}

func (l *costLookup) Lookup(_ context.Context, r *domain.LookupRequest) (*domain.LookupResponse, error) {
	out := &domain.LookupResponse{SchemaID: r.SchemaID, Results: make([]domain.LookupResult, len(r.Keys))}
	for i, k := range r.Keys {
		out.Results[i].Row = l.row(k)
	}
	return out, nil
}

func (l *costLookup) PrefixLookup(_ context.Context, r *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
	out := &domain.PrefixLookupResponse{SchemaID: r.SchemaID, Results: make([]domain.PrefixLookupResult, len(r.Prefixes))}
	for i, p := range r.Prefixes {
		if row := l.row(p); row != nil {
			out.Results[i].Rows = [][]domain.Datum{row}
		}
	}
	return out, nil
}

// costBackend is a memory cluster whose sessions look rows up in the fake
// and resolve table definitions from a map loaded once, as the Fluss
// adapter's sessions do from their metadata cache (the memory catalog copies
// a table's schema on every GetTable).
type costBackend struct {
	*memory.Cluster
	lookup domain.Lookup
	tables costTables
}

func (c costBackend) Session(ctx context.Context, p domain.Principal) (domain.Session, error) {
	s, err := c.Cluster.Session(ctx, p)
	if err != nil {
		return nil, err
	}
	return costSession{Session: s, lookup: c.lookup, tables: c.tables}, nil
}

type costSession struct {
	domain.Session
	lookup domain.Lookup
	tables costTables
}

func (s costSession) Lookup() domain.Lookup           { return s.lookup }
func (s costSession) Tables() domain.TableDefinitions { return s.tables }

// costTables are the benchmark's table definitions, loaded once.
type costTables map[domain.TablePath]domain.TableInfo

func (t costTables) Table(_ context.Context, path domain.TablePath) (domain.TableInfo, error) {
	info, ok := t[path]
	if !ok {
		return domain.TableInfo{}, domain.NotFound(domain.ResourceTable, "table %s does not exist", path)
	}
	return info, nil
}

func (t costTables) Refresh(ctx context.Context, path domain.TablePath) (domain.TableInfo, error) {
	return t.Table(ctx, path)
}

// startCostGateway starts the gateway with the default configuration (a
// fluss cluster "default" served by the fake) and the process logger writing
// to io.Discard; it returns the REST listener's address.
func startCostGateway(b *testing.B) string {
	b.Helper()
	cluster := memory.NewCluster()
	ctx := context.Background()
	require.NoError(b, cluster.Catalog().CreateDatabase(ctx, costDatabase, domain.DatabaseDescriptor{}, false))
	require.NoError(b, cluster.Catalog().CreateTable(ctx, domain.TablePath{Database: costDatabase, Table: costPrefixTable}, domain.TableDescriptor{
		Schema:      domain.Schema{Columns: costColumns(), PrimaryKey: []string{"k", "name"}},
		BucketKeys:  []string{"k"},
		BucketCount: 4,
	}, false))
	require.NoError(b, cluster.Catalog().CreateTable(ctx, domain.TablePath{Database: costDatabase, Table: costKeyTable}, domain.TableDescriptor{
		Schema:      domain.Schema{Columns: costColumns(), PrimaryKey: []string{"k"}},
		BucketCount: 4,
	}, false))
	tables := costTables{}
	for _, name := range []string{costPrefixTable, costKeyTable} {
		path := domain.TablePath{Database: costDatabase, Table: name}
		info, err := cluster.Catalog().GetTable(ctx, path)
		require.NoError(b, err)
		tables[path] = info
	}
	backend := costBackend{Cluster: cluster, lookup: newCostLookup(), tables: tables}
	cfg, err := config.Load(config.Options{Env: map[string]string{
		"FLUSS_GATEWAY__REST__LISTEN":                          "127.0.0.1:0",
		"FLUSS_GATEWAY__METRICS__EXPORTER__PROMETHEUS__LISTEN": "127.0.0.1:0",
		"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE":             "0s",
	}})
	require.NoError(b, err)
	log, out := processLogger(io.Discard, slog.LevelInfo)
	b.Cleanup(func() { _ = out.Close() })
	var rest *RESTServer
	app := fxtest.New(b, Options(cfg, log),
		fx.Decorate(func() ClusterFactory {
			return func(context.Context, config.Cluster, *slog.Logger) (ClusterBackend, error) { return backend, nil }
		}),
		fx.Populate(&rest),
	)
	app.RequireStart()
	b.Cleanup(app.RequireStop)
	return rest.Addr().String()
}

// runCostClients sends b.N copies of request over costClients keep-alive
// connections and reports the process's CPU per request.
func runCostClients(b *testing.B, addr string, request []byte, check func([]byte) bool) {
	b.Helper()
	conns := make([]*costConn, costClients)
	for i := range conns {
		c, err := dialCost(addr)
		require.NoError(b, err)
		defer c.Close()
		conns[i] = c
	}
	// Warm up: every connection, pools and caches.
	for _, c := range conns {
		for range 20 {
			body, err := c.roundTrip(request)
			require.NoError(b, err)
			require.True(b, check(body), "unexpected answer: %.300s", body)
		}
	}
	var next atomic.Int64
	var bad atomic.Int64
	var firstErr error
	var once sync.Once
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := processCPU(), time.Now()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				body, err := c.roundTrip(request)
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				if !check(body) {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	cpu, wall := processCPU()-cpu0, time.Since(t0)
	b.StopTimer()
	require.NoError(b, firstErr)
	require.Zero(b, bad.Load(), "answers that failed the check")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/req")
	b.ReportMetric(float64(b.N)/wall.Seconds(), "req/s")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// costConn is one keep-alive HTTP/1.1 connection: the request is written as
// prepared bytes, the answer read by its Content-Length (the gateway answers
// lookups with one).
type costConn struct {
	net.Conn
	r    *bufio.Reader
	body []byte
}

func dialCost(addr string) (*costConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &costConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

func (c *costConn) roundTrip(req []byte) ([]byte, error) {
	if _, err := c.Write(req); err != nil {
		return nil, err
	}
	status, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(status, []byte("HTTP/1.1 200 ")) {
		return nil, fmt.Errorf("status line %q", status)
	}
	n := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(line) <= 2 {
			break
		}
		if name, value, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(value))); err != nil {
				return nil, err
			}
		}
	}
	if n < 0 {
		return nil, fmt.Errorf("an answer without Content-Length")
	}
	if cap(c.body) < n {
		c.body = make([]byte, n)
	}
	c.body = c.body[:n]
	_, err = io.ReadFull(c.r, c.body)
	return c.body, err
}

// cannedAnswer is the gateway's answer to the scenario's request, head and
// body, taken once from a gateway.
func cannedAnswer(b *testing.B, sc costScenario) []byte {
	b.Helper()
	addr := startCostGateway(b)
	c, err := net.Dial("tcp", addr)
	require.NoError(b, err)
	defer c.Close()
	_, err = c.Write(sc.request(addr))
	require.NoError(b, err)
	r := bufio.NewReader(c)
	var head bytes.Buffer
	n := 0
	for {
		line, err := r.ReadString('\n')
		require.NoError(b, err)
		head.WriteString(line)
		if name, value, ok := bytes.Cut([]byte(line), []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
			n, err = strconv.Atoi(string(bytes.TrimSpace(value)))
			require.NoError(b, err)
		}
		if line == "\r\n" {
			break
		}
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	require.NoError(b, err)
	require.True(b, sc.check(body))
	return append(head.Bytes(), body...)
}

// serveCanned answers every request on its connections with answer,
// reading each request's head and Content-Length body.
func serveCanned(b *testing.B, answer []byte) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	var wg sync.WaitGroup
	b.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				r := bufio.NewReaderSize(c, 64<<10)
				for {
					n := 0
					for {
						line, err := r.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(line) <= 2 {
							break
						}
						if name, value, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(name, []byte("Content-Length")) {
							n, _ = strconv.Atoi(string(bytes.TrimSpace(value)))
						}
					}
					if _, err := r.Discard(n); err != nil {
						return
					}
					if _, err := c.Write(answer); err != nil {
						return
					}
				}
			}()
		}
	}()
	b.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String()
}
