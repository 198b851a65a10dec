package http

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// streamingGateway has one write and one scan slot and a memory budget.
func streamingGateway(t *testing.T, budget *membudget.Budget, extra ...gatewayOption) *gateway {
	t.Helper()
	opts := append([]gatewayOption{func(o *Options, _ *Deps) {
		o.MemoryBudget = budget
		o.Admission = Admission{WriteConcurrency: 1, ScanConcurrency: 1, MaxWait: 20 * time.Millisecond}
	}}, extra...)
	return newGateway(t, opts...).withTables()
}

// TestStreamedVerdictsArriveBeforeTheBodyEnds: through a real listener, a
// slow NDJSON body with Accept: application/x-ndjson gets each entry's
// verdict line while the rest of the body has not been sent; the write
// slot stays taken until the stream ends and is free (and the budget whole)
// afterwards.
func TestStreamedVerdictsArriveBeforeTheBodyEnds(t *testing.T) {
	budget := membudget.New(64<<20, time.Second)
	// A stream outlives the response write timeout (it is written until
	// its deadline).
	g := streamingGateway(t, budget, func(o *Options, _ *Deps) { o.WriteTimeout = 200 * time.Millisecond })
	base := serveOnListener(t, g)

	pr, pw := io.Pipe()
	req, err := nethttp.NewRequest(nethttp.MethodPost, base+eventsWrite, pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", MIMEApplicationNDJSON)
	req.Header.Set("Accept", MIMEApplicationNDJSON)
	type result struct {
		resp *nethttp.Response
		err  error
	}
	answered := make(chan result, 1)
	go func() {
		resp, err := nethttp.DefaultClient.Do(req)
		answered <- result{resp, err}
	}()
	_, err = io.WriteString(pw, appendLine("a", 1, "one")+"\n")
	require.NoError(t, err)
	var res result
	select {
	case res = <-answered:
	case <-time.After(20 * time.Second):
		t.Fatal("no answer head within 20 s")
	}
	require.NoError(t, res.err)
	defer res.resp.Body.Close()
	require.Equal(t, 200, res.resp.StatusCode)
	assert.Equal(t, MIMEApplicationNDJSON, res.resp.Header.Get("Content-Type"))
	body := bufio.NewReader(res.resp.Body)

	assert.Equal(t, `{"line":1,"id":"a","ok":true}`+"\n", testlog.ReadLine(t, body, 20*time.Second), "the first verdict arrives while the body is open")
	// The stream holds the only write slot.
	other := g.postRaw(eventsWrite, []byte(appendLine("x", 9, "x")), "Content-Type", MIMEApplicationNDJSON)
	assert.Equal(t, 429, other.status, "%s", other.body)

	time.Sleep(400 * time.Millisecond) // past the write timeout
	_, err = io.WriteString(pw, `{"id":"b","append":{"nope":1}}`+"\n")
	require.NoError(t, err)
	second := testlog.ReadLine(t, body, 20*time.Second)
	assert.Contains(t, second, `{"line":2,"id":"b","ok":false,"error_code":"invalid_argument"`)

	require.NoError(t, pw.Close())
	rest, err := io.ReadAll(body)
	require.NoError(t, err)
	assert.Empty(t, string(rest))

	assert.Equal(t, 200, g.postRaw(eventsWrite, []byte(appendLine("c", 3, "c")), "Content-Type", MIMEApplicationNDJSON).status,
		"the slot is free once the stream ended")
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond)
	logs := g.logs.String()
	assert.Contains(t, logs, `"rows":2`)
	assert.Contains(t, logs, `"bytes_out":`)
}

// TestStreamedVerdictsEndWithAnErrorLine: a line that is not JSON after
// written entries ends the stream with the error envelope on one line,
// after the verdicts of the entries before it.
func TestStreamedVerdictsEndWithAnErrorLine(t *testing.T) {
	t.Parallel()
	g := newGateway(t).withTables()
	body := appendLine("a", 1, "x") + "\n" + appendLine("b", 2, "y") + "\n{not json\n" + appendLine("c", 3, "z") + "\n"
	r := g.postRaw(eventsWrite, []byte(body), "Content-Type", MIMEApplicationNDJSON, "Accept", MIMEApplicationNDJSON)
	require.Equal(t, 200, r.status)
	lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
	require.Len(t, lines, 3, "%s", r.body)
	assert.Equal(t, `{"line":1,"id":"a","ok":true}`, lines[0])
	assert.Equal(t, `{"line":2,"id":"b","ok":true}`, lines[1])
	last := response{status: 400, header: r.header, body: []byte(lines[2])}
	assert.Equal(t, "invalid_argument", last.errorCode(t))
	assert.Contains(t, last.message(t), "line 3")
	assert.Contains(t, last.message(t), "2 written")
}

// manyScans answers every scan with n records of a 100-byte message.
type manyScans struct{ n int }

func (f manyScans) Scan(context.Context, application.Scope, domain.TablePath, application.ScanRequest) (application.ScanResult, error) {
	cols := []domain.Column{{Name: "id", Type: domain.DataType{Root: domain.TypeBigInt}}, {Name: "msg", Type: domain.DataType{Root: domain.TypeString}}}
	res := application.ScanResult{Columns: cols, Cursor: "c-end", CaughtUp: true}
	msg := []byte(strings.Repeat("m", 100))
	for i := range f.n {
		res.Records = append(res.Records, application.ScanRecord{LogRecord: domain.LogRecord{
			Offset: int64(i), ChangeType: "+A", Row: []domain.Datum{{I64: int64(i)}, {Bytes: msg}}}})
	}
	return res, nil
}

func (manyScans) Offsets(context.Context, application.Scope, domain.TablePath, application.ScanStart, []string, []int32) (application.OffsetsResult, error) {
	return application.OffsetsResult{}, nil
}

// TestStreamedScanLinesArriveBeforeTheAnswerEnds: an NDJSON scan sends its
// first record while the rest is not rendered yet (the stream is held after
// the first send); meanwhile the scan slot and the records' memory charge
// are held, and both are free once the stream ends with the cursor line.
func TestStreamedScanLinesArriveBeforeTheAnswerEnds(t *testing.T) {
	budget := membudget.New(64<<20, time.Second)
	g := streamingGateway(t, budget, withScans(manyScans{n: 2000}))
	base := serveOnListener(t, g)
	path := db + "/d/tables/events/records/scan"

	firstSent, resume := make(chan struct{}), make(chan struct{})
	scanLineSent = func(n int) {
		if n == 1 {
			close(firstSent)
			<-resume
		}
	}
	defer func() { scanLineSent = nil }()

	req, err := nethttp.NewRequest(nethttp.MethodPost, base+path, strings.NewReader(`{"start":{"position":"earliest"}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", MIMEApplicationNDJSON)
	resp, err := nethttp.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	body := bufio.NewReader(resp.Body)
	<-firstSent
	var first map[string]any
	require.NoError(t, json.Unmarshal([]byte(testlog.ReadLine(t, body, 20*time.Second)), &first))
	assert.EqualValues(t, 0, first["offset"], "the first record arrives before the answer is rendered")
	assert.Positive(t, budget.Stats().InUse, "the records stay charged while they stream")
	other := g.call(nethttp.MethodPost, path, `{"start":{"position":"earliest"}}`)
	assert.Equal(t, 429, other.status, "the stream holds the only scan slot: %s", other.body)
	close(resume)

	n := 1
	var last string
	for {
		line, err := body.ReadString('\n')
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		last = line
		n++
	}
	assert.Equal(t, 2001, n, "2000 records and the cursor line")
	assert.Equal(t, `{"cursor":"c-end","caught_up":true}`+"\n", last)
	assert.Eventually(t, func() bool { return budget.Stats().InUse == 0 }, 2*time.Second, 10*time.Millisecond)
	scanLineSent = nil
	assert.Equal(t, 200, g.call(nethttp.MethodPost, path, `{"start":{"position":"earliest"}}`).status, "the slot is free once the stream ended")
}

// TestStreamedScanCutAtTheAnswerCap: the answer-size cap still bounds a
// streamed scan: it ends after the last record that fits, then the cursor.
func TestStreamedScanCutAtTheAnswerCap(t *testing.T) {
	t.Parallel()
	g := newGateway(t, withScans(manyScans{n: 100}), func(o *Options, _ *Deps) { o.MaxLookupResponseBytes = 2000 }).withTables()
	r := g.call(nethttp.MethodPost, db+"/d/tables/events/records/scan", `{"start":{"position":"earliest"}}`, "Accept", MIMEApplicationNDJSON)
	require.Equal(t, 200, r.status)
	assert.LessOrEqual(t, len(r.body), 2000)
	lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
	require.Greater(t, len(lines), 2)
	assert.Contains(t, lines[len(lines)-1], `"caught_up":false`)
}

// TestStreamedAnswersLeaveNoGoroutines: streamed answers, finished, failed
// and left by their client midway, leave no goroutine behind.
func TestStreamedAnswersLeaveNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		// fasthttp's idle-worker cleaner sleeps out its 10 s period after Shutdown.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"))
	g := newGateway(t, withScans(manyScans{n: 500})).withTables()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.app.Listener(ln)
	}()
	base := "http://" + ln.Addr().String()

	var body strings.Builder
	for i := range 3*ndjsonChunkRows + 5 {
		body.WriteString(appendLine(fmt.Sprintf("e%d", i), i, "m") + "\n")
	}
	r := g.postRaw(eventsWrite, []byte(body.String()+"{bad\n"), "Content-Type", MIMEApplicationNDJSON, "Accept", MIMEApplicationNDJSON)
	require.Equal(t, 200, r.status)
	r = g.call(nethttp.MethodPost, db+"/d/tables/events/records/scan", `{"start":{"position":"earliest"}}`, "Accept", MIMEApplicationNDJSON)
	require.Equal(t, 200, r.status)

	// A client that leaves midway: its body stays open, it closes the
	// connection after the first verdict.
	tr := &nethttp.Transport{}
	client := &nethttp.Client{Transport: tr}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := nethttp.NewRequestWithContext(ctx, nethttp.MethodPost, base+eventsWrite, pr)
	require.NoError(t, err)
	req.Header.Set("Content-Type", MIMEApplicationNDJSON)
	req.Header.Set("Accept", MIMEApplicationNDJSON)
	go func() { _, _ = io.WriteString(pw, appendLine("a", 1, "x")+"\n") }()
	resp, err := client.Do(req)
	require.NoError(t, err)
	testlog.ReadLine(t, bufio.NewReader(resp.Body), 20*time.Second)
	cancel()
	_ = resp.Body.Close()
	_ = pw.Close()
	tr.CloseIdleConnections()

	require.NoError(t, g.app.Shutdown())
	<-done
}
