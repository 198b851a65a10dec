package http

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// Rendering a scan's records in parallel. Rendering ~9,000 records as JSON
// is most of a large scan answer's CPU, and one cursor chain sends its
// requests one after the other, so the render of one answer is on the
// chain's critical path. The records are cut into runs of consecutive
// records (chunks); up to GOMAXPROCS goroutines render the chunks, each
// into its own buffer with the end of every record noted; the answer is
// then put together in record order (renderScan, writeScanLines), which
// applies the answer-size cap record by record exactly as rendering one
// record after the other did.

// scanChunkRecords is the size of a chunk, in records.
const scanChunkRecords = 512

// scanRenderWorkers bounds the goroutines that render (GOMAXPROCS when 0;
// tests set it).
var scanRenderWorkers = 0

// renderedChunk is records [from, to) of an answer rendered, one after the
// other with nothing between them (each followed by sep when sep is not
// 0); ends[k] is the end in buf of record from+k. A chunk that passed limit
// on its own stops early: len(ends) < to-from.
type renderedChunk struct {
	from, to int
	buf      []byte
	ends     []int
	// done is closed once the chunk is rendered (or given up).
	done chan struct{}
	err  error
}

// chunkBuffers recycles the chunks' buffers across answers.
var chunkBuffers = sync.Pool{New: func() any { return new([]byte) }}

// scanRender renders the records of one answer in chunks.
type scanRender struct {
	ctx   context.Context
	ch    *membudget.Charge
	res   *application.ScanResult
	sep   byte
	limit int
	// chargeRecords: each chunk charges its decoded records before it is
	// rendered (they were not charged as a whole first).
	chargeRecords bool
	chunks        []renderedChunk
	next          atomic.Int64
	// stopped: the chunks not started yet are not needed (the answer ends
	// before them, or failed).
	stopped atomic.Bool
	wg      sync.WaitGroup
}

// errScanChunkSkipped marks a chunk not rendered because the answer no longer
// needed it.
var errScanChunkSkipped = &domain.Error{Kind: domain.KindInternal, Message: "scan answer chunk not rendered"}

// startScanRender starts rendering res's records (each followed by sep
// unless it is 0) on up to GOMAXPROCS goroutines, the chunks' buffers
// charged to ch as they grow (with chargeRecords, each chunk's decoded
// records first); a chunk stops once its own bytes pass limit.
// The caller waits for each chunk (wait) in order and must call finish.
func startScanRender(ctx context.Context, ch *membudget.Charge, res *application.ScanResult, sep byte, limit int, chargeRecords bool) *scanRender {
	r := &scanRender{ctx: ctx, ch: ch, res: res, sep: sep, limit: limit, chargeRecords: chargeRecords}
	n := len(res.Records)
	for from := 0; from < n; from += scanChunkRecords {
		r.chunks = append(r.chunks, renderedChunk{from: from, to: min(n, from+scanChunkRecords), done: make(chan struct{})})
	}
	workers := scanRenderWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(r.chunks))
	if workers < 2 {
		r.work() // one chunk, or one processor: render here
		return r
	}
	for range workers {
		r.wg.Go(r.work)
	}
	return r
}

// work renders chunks, taking the next one not taken, until none is left.
func (r *scanRender) work() {
	render := newScanRenderer(r.res.Columns)
	for {
		k := int(r.next.Add(1)) - 1
		if k >= len(r.chunks) {
			return
		}
		c := &r.chunks[k]
		if r.stopped.Load() {
			c.err = errScanChunkSkipped
		} else {
			c.err = r.renderChunk(render, c)
		}
		close(c.done)
	}
}

// scanRecordHeadroom is the least free room a chunk's buffer keeps before
// a record is rendered into it.
const scanRecordHeadroom = 4 << 10

func (r *scanRender) renderChunk(render *scanRenderer, c *renderedChunk) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &domain.Error{Kind: domain.KindInternal, Message: "rendering the scan's records failed"}
		}
	}()
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if r.chargeRecords {
		// On this goroutine, the records' memory is read once here and
		// again, still in the cache, as they are rendered.
		var decoded int64
		for i := c.from; i < c.to; i++ {
			decoded += datumBytes(r.res.Records[i].Row) + scanRecordOverhead
		}
		if err := r.ch.Acquire(r.ctx, decoded); err != nil {
			return budgetError(err, "the records read")
		}
	}
	bp := chunkBuffers.Get().(*[]byte)
	buf := (*bp)[:0]
	charged := 0
	grow := func(need int) error {
		size := max(2*cap(buf), len(buf)+need, 64<<10)
		if err := r.ch.Acquire(r.ctx, int64(size-charged)); err != nil {
			return budgetError(err, "the answer")
		}
		charged = size
		buf = growTo(buf, size)
		return nil
	}
	if cap(buf) > 0 {
		if err := r.ch.Acquire(r.ctx, int64(cap(buf))); err != nil {
			chunkBuffers.Put(bp)
			return budgetError(err, "the answer")
		}
		charged = cap(buf)
	}
	c.ends = make([]int, 0, c.to-c.from)
	largest := 0
	for i := c.from; i < c.to; i++ {
		if room := max(scanRecordHeadroom, 2*largest); cap(buf)-len(buf) < room {
			if err := grow(room); err != nil {
				c.buf = buf
				return err
			}
		}
		start, before := len(buf), cap(buf)
		buf = render.appendRecord(buf, &r.res.Records[i])
		if r.sep != 0 {
			buf = append(buf, r.sep)
		}
		if cap(buf) > before && cap(buf) > charged {
			// A record larger than the room kept: charge what append took.
			if err := r.ch.Acquire(r.ctx, int64(cap(buf)-charged)); err != nil {
				c.buf = buf
				return budgetError(err, "the answer")
			}
			charged = cap(buf)
		}
		largest = max(largest, len(buf)-start)
		c.ends = append(c.ends, len(buf))
		if len(buf) > r.limit {
			break // past the cap on its own: the answer ends in or before this chunk
		}
	}
	c.buf = buf
	return nil
}

// wait returns chunk k once it is rendered.
func (r *scanRender) wait(k int) *renderedChunk {
	<-r.chunks[k].done
	return &r.chunks[k]
}

// finish waits for every goroutine (chunks not started yet are skipped)
// and returns the chunks' buffers to their pool; the chunks are not to be
// used after it.
func (r *scanRender) finish() {
	r.stopped.Store(true)
	for k := range r.chunks {
		<-r.chunks[k].done
	}
	r.wg.Wait()
	for k := range r.chunks {
		if b := r.chunks[k].buf; cap(b) > 0 && cap(b) <= 4<<20 {
			chunkBuffers.Put(&b)
		}
		r.chunks[k].buf = nil
	}
}
