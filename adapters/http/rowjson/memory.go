package rowjson

import "github.com/fluss-gateway/fluss-gateway-go/domain"

// Buffer owns the memory that decoded rows live in: a Datum slab for rows
// and nested values, a byte arena for strings, bytes and wide decimals, and
// the entries array. Memory is handed out from large chunks, so a request
// costs a handful of allocations whatever its size, and the jsontext input
// buffer is never referenced by a result.
//
// The zero Buffer is ready to use. DecodeWrite uses a fresh Buffer per
// request, which the garbage collector reclaims with the rows. A server can
// instead keep Buffers in a pool and decode with DecodeWriteTo: once nothing
// reads the rows any more (the write has a verdict for every entry, and no
// goroutine still holds a row), Reset makes the memory reusable, which spares
// the allocation, zeroing and collection of about a kilobyte per row. Reset
// while rows are still in use corrupts them. A Buffer serves one decode at a
// time.
type Buffer struct {
	slab    slab
	arena   arena
	entries []domain.WriteEntry
	used    bool // entries backs a batch not yet Reset
}

// ChargeFunc is told, before a decode puts a chunk of a Buffer to use, of the
// chunk's size in bytes: datums for a chunk of row values (domain.Datum
// slots), bytes for a chunk of string, byte and wide-decimal contents (one of
// the two is 0). A chunk is charged once per decode, whether it is allocated
// then or kept from an earlier decode (Reset starts the count again). A
// non-nil error ends the decode with that error (the decoder's
// DecodeWriteTo and DecodeWriteReport return it as it is) before the chunk
// is allocated.
type ChargeFunc func(datums, bytes int) error

// SetCharge makes every chunk the next decodes put to use be charged through
// f first (nil: none), so that a caller can bound the memory of decoded rows
// before it is allocated (the gateway's memory budget, issue 21). The chunk
// a decode starts with is charged by SetCharge itself (its error is f's),
// the others as the decode reaches them. Reset drops f, so a pooled Buffer
// never charges a finished request.
func (b *Buffer) SetCharge(f ChargeFunc) error {
	b.slab.charge, b.arena.charge = f, f
	b.slab.paid, b.arena.paid = 0, 0
	if f == nil {
		return nil
	}
	if err := b.slab.pay(b.slab.ci); err != nil {
		return err
	}
	return b.arena.pay(b.arena.ci)
}

// chargeError carries a ChargeFunc's error out of an allocation (which has
// no error result) to the decode's entry point (see chargeRefusal).
type chargeError struct{ err error }

// chargeRefusal returns the ChargeFunc error a recovered panic value r
// carries; any other panic goes on.
func chargeRefusal(r any) error {
	ce, ok := r.(chargeError)
	if !ok {
		panic(r)
	}
	return ce.err
}

// Reset makes all memory of b reusable. Rows decoded into b must no longer be
// read. It keeps at most 1 MiB each of Datum and byte chunks (the rest is
// left to the garbage collector), so a pooled Buffer does not pin the memory
// of one exceptional request. It drops the ChargeFunc (see SetCharge).
func (b *Buffer) Reset() { b.reset(maxRetained) }

// Recycle is Reset for the next decode of the same caller, which keeps b
// instead of pooling it (the chunks of one NDJSON body): it keeps up to
// maxRecycled bytes each of Datum and byte chunks, so that a decode of as
// many rows as the last one allocates nothing (an 8,192-line chunk's
// ~7 MiB of Datums, as chunks were before session 10, allocated afresh per chunk under Reset's 1 MiB bound,
// cost a streamed body a third more CPU per row than a JSON body, most of
// it zeroing and collecting them).
func (b *Buffer) Recycle() { b.reset(maxRecycled) }

func (b *Buffer) reset(limit int) {
	// The Datums kept in the slab's chunks point at the last decode's
	// values: into the arena's chunks, into the slab's own chunks, or at
	// values allocated apart (large ones) or in chunks this Reset drops.
	// Only in the last case would a pooled Buffer pin memory it does not
	// count as retained (issue 21), so only then are the kept chunks
	// cleared now; otherwise a chunk is cleared as it is handed out again,
	// while its cache lines are about to be written anyway (clearing every
	// kept chunk here, up to 1 MiB per request, cost the 500-row writes of
	// make bench-native about a tenth of the gateway's CPU: issue 22).
	escaped := b.arena.reset(limit) || b.slab.escaped
	b.slab.reset(escaped, limit)
	// Drop references to rows in the whole array: a decode leaves entries
	// at length 0 (DecodeWriteTo hands the filled slice to the batch), so
	// clearing only its length cleared nothing, and every pooled Buffer
	// kept the chunks its last decode had trimmed alive through the
	// entries' rows (issue 21: 130 MiB of Datum chunks in an idle gateway).
	clear(b.entries[:cap(b.entries)])
	b.entries = b.entries[:0]
	b.used = false
	if cap(b.entries) > maxRetainedEntries {
		b.entries = nil
	}
	b.slab.charge, b.arena.charge = nil, nil
	b.slab.paid, b.arena.paid = 0, 0
}

// Retained reports the bytes of chunk memory b holds.
func (b *Buffer) Retained() int {
	return b.slab.retained*datumSize + b.arena.retained
}

const (
	datumSize = 80 // unsafe.Sizeof(domain.Datum{}) on 64-bit platforms
	// maxRetained bounds the chunk memory (each of Datums and bytes) a
	// pooled Buffer keeps across requests, so that the pool does not keep
	// the high-water mark of a burst (issue 21): the rows of a 500-row
	// request of ten columns (~640 KiB of Datums) fit, larger ones allocate
	// the rest afresh.
	maxRetained        = 1 << 20
	maxRecycled        = 32 << 20
	maxRetainedEntries = 1 << 16

	slabFirstChunk  = 256
	slabMaxChunk    = 1 << 15
	arenaFirstChunk = 4 << 10
	arenaMaxChunk   = 1 << 20
)

// slab hands out zeroed Datums from chunks. Chunks are kept across Reset;
// a reused chunk is cleared as it is handed out again.
type slab struct {
	chunks   [][]domain.Datum
	ci       int // current chunk index; len(chunks) when none
	off      int // used part of the current chunk; an int, so allocating stores no pointer
	dirty    int // chunks[:dirty] may hold Datums of an earlier decode
	retained int // Datums in chunks
	next     int // size of the next new chunk
	// escaped: since the last reset, Datums were handed out apart from the
	// chunks (large requests), which Datums in the chunks may point at.
	escaped bool
	// charge (nil: none) is told of each chunk before its first use since
	// the last Reset; chunks[:paid] were charged.
	charge ChargeFunc
	paid   int
}

// pay charges chunk i (a chunk index, or len(chunks) for none) unless it
// was charged since the last Reset.
func (s *slab) pay(i int) error {
	if s.charge == nil || i < s.paid || i >= len(s.chunks) {
		return nil
	}
	if err := s.charge(len(s.chunks[i])*datumSize, 0); err != nil {
		return err
	}
	s.paid = i + 1
	return nil
}

// mustCharge charges n Datums or bytes about to be allocated, raising a
// refusal as a chargeError (recovered at the decode's entry point).
func mustCharge(f ChargeFunc, datums, bytes int) {
	if f == nil {
		return
	}
	if err := f(datums, bytes); err != nil {
		panic(chargeError{err})
	}
}

// alloc returns n zeroed Datums.
func (s *slab) alloc(n int) []domain.Datum {
	if n == 0 {
		return []domain.Datum{} // not nil: an empty ARRAY or MAP
	}
	if s.ci < len(s.chunks) {
		if c := s.chunks[s.ci]; n <= len(c)-s.off {
			d := c[s.off : s.off+n : s.off+n]
			s.off += n
			if s.ci < s.dirty {
				clear(d)
			}
			return d
		}
	}
	return s.grow(n)
}

func (s *slab) grow(n int) []domain.Datum {
	// Move on to the next retained chunk that fits, if any.
	for s.ci+1 < len(s.chunks) {
		s.ci++
		s.off = 0
		if err := s.pay(s.ci); err != nil {
			panic(chargeError{err})
		}
		if c := s.chunks[s.ci]; n <= len(c) {
			d := c[:n:n]
			s.off = n
			if s.ci < s.dirty {
				clear(d)
			}
			return d
		}
	}
	size := max(s.next, slabFirstChunk)
	if n > size/4 {
		// Large values get their own allocation rather than wasting the
		// rest of a chunk.
		mustCharge(s.charge, n*datumSize, 0)
		s.escaped = true
		return make([]domain.Datum, n)
	}
	mustCharge(s.charge, size*datumSize, 0)
	s.next = min(size*2, slabMaxChunk)
	c := make([]domain.Datum, size)
	s.chunks = append(s.chunks, c)
	s.paid = len(s.chunks)
	s.retained += size
	s.ci, s.off = len(s.chunks)-1, n
	return c[:n:n]
}

// used is the number of leading kept chunks that may hold Datums: those an
// earlier decode left dirty and those handed out since.
func (s *slab) used() int {
	return min(max(s.dirty, s.ci+1), len(s.chunks))
}

// reset keeps the first chunks, up to limit bytes. With escaped (the
// last decode's values reach memory the Buffer does not keep: values
// allocated apart, or chunks dropped here) the kept chunks are cleared now:
// their Datums would otherwise keep those values alive until the next
// decode reached them (issue 21: 25 MiB per pooled Buffer after a write of
// 64 KiB strings). Otherwise every Datum of a kept chunk points into the
// Buffer's own kept chunks, and the chunks are cleared as they are handed
// out again (alloc), at most limit bytes either way.
func (s *slab) reset(escaped bool, limit int) {
	total := 0
	for i, c := range s.chunks {
		if (total+len(c))*datumSize > limit {
			clear(s.chunks[i:])
			s.chunks = s.chunks[:i]
			escaped = true // Elems may point into the dropped chunks
			break
		}
		total += len(c)
	}
	s.retained = total
	if escaped {
		// The chunks an earlier decode left dirty and those this one used.
		for _, c := range s.chunks[:s.used()] {
			clear(c)
		}
		s.dirty = 0
	} else {
		s.dirty = s.used()
	}
	s.escaped = false
	s.ci, s.off = 0, 0
}

// arena hands out byte slices from chunks; reused chunks need no clearing
// since every byte handed out is written first.
type arena struct {
	chunks   [][]byte
	ci       int
	buf      []byte // chunks[ci][:used]
	next     int
	retained int
	large    bool // the last reservation is a separate allocation
	// escaped: since the last reset, a reservation was allocated apart.
	escaped bool
	// charge and paid: as in slab.
	charge ChargeFunc
	paid   int
}

// pay charges chunk i unless it was charged since the last Reset.
func (a *arena) pay(i int) error {
	if a.charge == nil || i < a.paid || i >= len(a.chunks) {
		return nil
	}
	if err := a.charge(0, cap(a.chunks[i])); err != nil {
		return err
	}
	a.paid = i + 1
	return nil
}

// reserve returns an empty slice with capacity n in arena memory; the caller
// fills at most n bytes and passes the result to commit.
func (a *arena) reserve(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		return a.grow(n)
	}
	a.large = false
	l := len(a.buf)
	return a.buf[l : l : l+n]
}

func (a *arena) grow(n int) []byte {
	for a.ci+1 < len(a.chunks) {
		a.ci++
		if err := a.pay(a.ci); err != nil {
			panic(chargeError{err})
		}
		a.buf = a.chunks[a.ci][:0]
		if n <= cap(a.buf) {
			a.large = false
			return a.buf[0:0:n]
		}
	}
	size := max(a.next, arenaFirstChunk)
	if n > size/4 {
		mustCharge(a.charge, 0, n)
		a.large = true
		a.escaped = true
		return make([]byte, 0, n)
	}
	mustCharge(a.charge, 0, size)
	a.next = min(size*2, arenaMaxChunk)
	a.buf = make([]byte, 0, size)
	a.chunks = append(a.chunks, a.buf)
	a.paid = len(a.chunks)
	a.retained += size
	a.ci = len(a.chunks) - 1
	a.large = false
	return a.buf[0:0:n]
}

// commit marks the bytes of b, filled from the last reservation, as used.
func (a *arena) commit(b []byte) []byte {
	if !a.large && len(b) > 0 {
		l := len(a.buf)
		if cap(a.buf)-l < len(b) || &a.buf[l : l+1][0] != &b[0] {
			panic("rowjson: arena commit of a foreign slice")
		}
		a.buf = a.buf[:l+len(b)]
	}
	return b[:len(b):len(b)]
}

// copy stores b in the arena.
func (a *arena) copy(b []byte) []byte {
	if l := len(a.buf); cap(a.buf)-l >= len(b) {
		a.buf = append(a.buf, b...)
		return a.buf[l:len(a.buf):len(a.buf)]
	}
	return a.commit(append(a.reserve(len(b)), b...))
}

// reset keeps the first chunks, up to limit bytes, and reports
// whether values were handed out since the last reset from memory it does
// not keep (large values allocated apart, or chunks dropped now).
func (a *arena) reset(limit int) (escaped bool) {
	escaped, a.escaped = a.escaped, false
	total := 0
	for i, c := range a.chunks {
		if total+cap(c) > limit {
			clear(a.chunks[i:])
			a.chunks = a.chunks[:i]
			escaped = true
			break
		}
		total += cap(c)
	}
	a.retained = total
	a.ci, a.buf, a.large = 0, nil, false
	if len(a.chunks) > 0 {
		a.buf = a.chunks[0][:0]
	}
	return escaped
}
