package scan

import "sync"

// recordSizes learns, per table id, the log bytes one record takes (over
// the batches recent fetches decoded: batch bytes over record count, a
// moving average), so that a fetch bounded by a record count asks the
// tablet servers for about the bytes it will use instead of the full byte
// bound: a 10,000-row scan of a 4-bucket table asked 8 MiB, decoded some
// 400 KiB and dropped the rest. It is a hint only, never a position or an
// answer: the tablet server always sends at least one whole batch
// (apache/fluss ReplicaManager#readFromLog, minOneMessage), so a low guess
// costs a shorter answer, not a stuck cursor. Safe for concurrent use.
type recordSizes struct {
	mu sync.Mutex
	m  map[int64]float64 // table id -> bytes per record
}

// maxRecordSizeTables bounds the tables remembered (then all are forgotten).
const maxRecordSizeTables = 4096

// fetchBytes returns the request-level max_fetch_bytes for up to records
// records of table id: twice the learned size of that many, at least
// minBucketBytes, at most limit; limit when nothing is learned yet or
// records is not positive.
func (s *recordSizes) fetchBytes(id int64, records, limit int) int {
	if records <= 0 {
		return limit
	}
	s.mu.Lock()
	per, ok := s.m[id]
	s.mu.Unlock()
	if !ok {
		return limit
	}
	want := 2 * per * float64(records)
	if want >= float64(limit) {
		return limit
	}
	return max(minBucketBytes, min(limit, int(want)))
}

// observe records that bytes of log batches held records records.
func (s *recordSizes) observe(id int64, bytes, records int64) {
	if records <= 0 || bytes <= 0 {
		return
	}
	per := float64(bytes) / float64(records)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= maxRecordSizeTables {
		s.m = map[int64]float64{}
	}
	if old, ok := s.m[id]; ok {
		per = 0.75*old + 0.25*per
	}
	s.m[id] = per
}
