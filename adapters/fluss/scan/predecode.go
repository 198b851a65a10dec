package scan

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/meta"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Decoding ahead, in parallel. A fetch's answer holds several log batches
// (one or more per bucket, ~2,000 rows each on the benchmark's table), and
// decompressing and decoding them is most of a fetch's CPU. The in-order
// pass (Fetch, decodeBucket, decodeBatch) is what decides which records an
// answer holds: the cross-bucket max_rows limit, the skip below each
// bucket's fetch offset, the offset order within a bucket. Before it runs,
// predecode walks the same buckets in the same order on the batch headers
// alone (no decompression), predicts which batches that pass will decode,
// and decodes those on up to GOMAXPROCS goroutines, each with its own
// decoders (a batchDecoder is not safe for concurrent use). The in-order
// pass then takes a batch's rows from its job instead of decoding it;
// everything else it does is unchanged, so the answer is the same as with
// no decoding ahead: a wrong prediction only costs work (a batch decoded
// ahead and not used, or one decoded in order after all), and a job that
// failed is ignored (the in-order pass decodes that batch itself and meets
// the error there, with its own message).

// batchJob is one log batch decoded ahead.
type batchJob struct {
	batch []byte
	// Set by run: ok when the batch decoded without error.
	ok   bool
	h    record.LogBatch
	dec  *batchDecoder
	rows [][]domain.Datum
	cts  []record.ChangeType
}

// run decodes the whole batch with the worker's plan p; a failure (or a
// panic, a bug: the in-order pass meets it on the request's goroutine)
// leaves ok false.
func (j *batchJob) run(ctx context.Context, s *Scanner, t *meta.Table, p *plan) {
	defer func() {
		if recover() != nil {
			j.ok = false
		}
	}()
	h, err := p.readHeader(j.batch)
	if err != nil || int32(h.SchemaID) > t.Info.SchemaID {
		// A batch of a newer schema: the in-order pass reloads the
		// table once (plan.decoder), not each goroutine.
		return
	}
	dec, err := p.decoder(ctx, s, t, int32(h.SchemaID))
	if err != nil {
		return
	}
	rows, cts, err := dec.decode(j.batch, &h)
	if err != nil {
		return
	}
	j.h, j.dec, j.rows, j.cts, j.ok = h, dec, rows, cts, true
}

// aheadBucket is one bucket's records as the in-order pass will see them.
type aheadBucket struct {
	idx     int    // position in the fetch's buckets
	records []byte // the answer's log batches
	from    int64  // the fetch offset
}

// planAhead predicts, from the batch headers, which batches of buckets (in
// the in-order pass's order) that pass decodes under the cross-bucket
// limit maxRecords (none when not positive), and returns one job per such
// batch, per bucket index the jobs by batch position (nil where none), and
// the records the pass will take from them.
func planAhead(buckets []aheadBucket, maxRecords, n int) ([]*batchJob, [][]*batchJob, int) {
	var jobs []*batchJob
	byBucket := make([][]*batchJob, n)
	rows := 0
	for _, ab := range buckets {
		limit := -1
		if maxRecords > 0 {
			if limit = maxRecords - rows; limit <= 0 {
				break
			}
		}
		from, b := ab.from, ab.records
		for pos := 0; ; pos++ {
			batch, rest, _ := nextBatch(b)
			if batch == nil {
				break
			}
			b = rest
			h, _, err := record.ReadLogBatchNoCRC(batch)
			if err != nil {
				break
			}
			end := h.BaseOffset + int64(h.LastOffsetDelta) + 1
			if h.RecordCount <= 0 || end <= from {
				from = max(end, from)
				continue
			}
			j := &batchJob{batch: batch}
			jobs = append(jobs, j)
			if byBucket[ab.idx] == nil {
				byBucket[ab.idx] = make([]*batchJob, 0, 4)
			}
			for len(byBucket[ab.idx]) < pos {
				byBucket[ab.idx] = append(byBucket[ab.idx], nil)
			}
			byBucket[ab.idx] = append(byBucket[ab.idx], j)
			// The records at or after from: offsets base, base+1, ...
			got := int(h.RecordCount) - int(max(0, min(from-h.BaseOffset, int64(h.RecordCount))))
			from = max(end, from)
			if limit >= 0 {
				got = min(got, limit)
				limit -= got
				rows += got
				if limit == 0 {
					break
				}
			} else {
				rows += got
			}
		}
	}
	return jobs, byBucket, rows
}

// aheadWorkers bounds the goroutines that decode ahead (GOMAXPROCS when 0;
// tests set it).
var aheadWorkers = 0

// aheadMinRecords is the least records a fetch takes for its batches to be
// decoded ahead: below it (a long poll's few new records) the goroutines
// and their own decoders cost more than they save (tests set it).
var aheadMinRecords = 1024

// decodeAhead runs jobs on up to GOMAXPROCS goroutines (the calling one
// among them) and returns when all are done. With one job, or one
// processor, it does nothing: the in-order pass decodes as fast.
func (s *Scanner) decodeAhead(ctx context.Context, t *meta.Table, p *plan, jobs []*batchJob) {
	workers := aheadWorkers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(jobs))
	if workers < 2 {
		return
	}
	var next atomic.Int64
	work := func() {
		wp := p.forWorker()
		for {
			k := int(next.Add(1)) - 1
			if k >= len(jobs) || ctx.Err() != nil {
				return
			}
			jobs[k].run(ctx, s, t, wp)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// forWorker returns a plan for a goroutine decoding ahead: the same
// columns, its own decoders.
func (p *plan) forWorker() *plan {
	return &plan{format: p.format, current: p.current, want: p.want, pushdown: p.pushdown,
		decoders: map[int32]*batchDecoder{}}
}

// readHeader reads a batch's header, checking its CRC unless the server
// re-serialised it for a projection (record.ReadLogBatchNoCRC).
func (p *plan) readHeader(batch []byte) (record.LogBatch, error) {
	read := record.ReadLogBatch
	if p.pushdown != nil {
		read = record.ReadLogBatchNoCRC
	}
	h, _, err := read(batch)
	return h, err
}

// aheadRecords is the most records the in-order pass takes from a bucket's
// jobs done (the rows decoded ahead, at most limit when limit >= 0).
func aheadRecords(jobs []*batchJob, limit int) int {
	n := 0
	for _, j := range jobs {
		if j != nil && j.ok {
			n += len(j.rows)
		}
	}
	if limit >= 0 {
		n = min(n, limit)
	}
	return n
}

// jobAt returns the job of batch pos of a bucket when it decoded that very
// batch (nil when none, or when it failed).
func jobAt(jobs []*batchJob, pos int, batch []byte) *batchJob {
	if pos >= len(jobs) {
		return nil
	}
	j := jobs[pos]
	if j == nil || !j.ok || len(j.batch) != len(batch) || len(batch) == 0 || &j.batch[0] != &batch[0] {
		return nil
	}
	return j
}
