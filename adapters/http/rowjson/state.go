package rowjson

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
)

// Limits bound one request body.
type Limits struct {
	// MaxEntries bounds the entries of a write body and the keys or prefixes
	// of a lookup body; 0 means DefaultMaxEntries. Exceeding it is a
	// KindLimitExceeded error.
	MaxEntries int
	// MaxDepth bounds the nesting of ARRAY, MAP and ROW values: a top-level
	// column value is at depth 1, its elements or fields at depth 2, and so on.
	// A container value deeper than MaxDepth is rejected. 0 means
	// DefaultMaxDepth.
	MaxDepth int
	// ReportInvalid (write bodies) decodes the valid entries of a body with
	// invalid ones instead of failing it; DecodeWriteReport returns the
	// invalid ones. An invalid entry without a usable id still fails the
	// whole body.
	ReportInvalid bool
	// EntryEnds (write bodies), when not nil, pins where every entry must
	// end: the body holds exactly len(EntryEnds) entries and entries[i]
	// ends (the byte after its closing brace) at body offset EntryEnds[i].
	// Otherwise the decode fails with ErrEntryBounds and nothing else. A
	// caller that joins separately framed values into one entries array
	// (NDJSON lines joined with commas) learns from it, without a second
	// pass over the bytes, that every value was one entry on its own: one
	// that spilled into its neighbour (`{"a":"` then `","b":1}`) or held two
	// (`{…},{…}`) ends elsewhere.
	EntryEnds []int
}

// ErrEntryBounds is the error of a write body whose entries do not end where
// Limits.EntryEnds says.
var ErrEntryBounds = errors.New("rowjson: entries do not end at the given offsets")

// Defaults for zero Limits fields.
const (
	DefaultMaxEntries = 10000
	// DefaultMaxDepth is the official decoder's bound on type nesting
	// (decoder.rs MAX_TYPE_NESTING).
	DefaultMaxDepth = 64
)

func (l Limits) withDefaults() Limits {
	l.MaxEntries = defaults.Positive(l.MaxEntries, DefaultMaxEntries)
	l.MaxDepth = defaults.Positive(l.MaxDepth, DefaultMaxDepth)
	return l
}

// decodeOptions: invalid UTF-8 is rejected by the tokenizer (jsontext's
// default, spelled out because the codec's exactness depends on it).
//
// Duplicate object member names are rejected too, but by the decoder rather
// than by jsontext: every object the decoder accepts is schema-driven, so a
// member resolves to a column, field or known name whose "seen" bit is at hand,
// and a repeated one (however it is escaped) is an error. jsontext's own check
// re-unquotes and compares every name of every object, about 12% of the decode
// time. Values the decoder does not interpret (skipped while looking for an
// entry id after an error) never reach a result.
var decodeOptions = []jsontext.Options{
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(false),
}

// seg is one step of a column path: a column or ROW field (a is its index in
// Codec.names), an array or array-form map index (a), the key or value of an
// array-form map element, or an object-form map key (st.keys[a:b]). Segments
// hold no pointers: pushing them costs no GC write barrier.
type seg struct {
	kind uint8
	a, b int32
}

const (
	segName uint8 = iota
	segIndex
	segMapKey
	segMapValue
	segKey
)

// fieldError is a failure at a column path inside one entry, key or prefix;
// the caller prefixes it with the entry's name.
type fieldError struct {
	path    string
	msg     string
	syntax  bool // the tokenizer failed: the stream cannot be resumed
	unknown bool // the path names a column the table does not have
}

// noSuchColumn is the fieldError of a column name the codec's schema does
// not have (domain.ErrUnknownColumn once turned into a domain error).
func (st *state) noSuchColumn(name []byte) error {
	err := st.failAt(string(name), "no such column")
	err.(*fieldError).unknown = true
	return err
}

// fieldInvalid turns a fieldError into an invalid_argument domain error
// with the message format and args, keeping its unknown-column mark.
func fieldInvalid(fe *fieldError, format string, args ...any) error {
	if fe.unknown {
		return domain.UnknownColumn(format, args...)
	}
	return invalid(format, args...)
}

func (e *fieldError) Error() string {
	if e.path == "" {
		return e.msg
	}
	return "column `" + cutName(e.path) + "`: " + e.msg
}

// maxNameInMessage bounds a name (a column path, an unknown member) quoted in
// an error message: a 30 MiB unknown column name must not make a 30 MiB
// answer or log line (issue 21).
const maxNameInMessage = 128

// cutName shortens name to maxNameInMessage bytes (without splitting a
// character), marking the cut with "…".
func cutName(name string) string {
	if len(name) <= maxNameInMessage {
		return name
	}
	n := maxNameInMessage
	for n > 0 && name[n]&0xC0 == 0x80 {
		n--
	}
	return name[:n] + "…"
}

// state is the pooled per-request decoder state.
type state struct {
	dec jsontext.Decoder
	rd  bytes.Buffer

	c   *Codec
	lim Limits

	buf   *Buffer
	slab  *slab
	arena *arena

	path    []seg
	keys    []byte         // object-form map keys named by the path
	scratch []domain.Datum // element stack for ARRAY and MAP values
	present []uint64       // columns seen in the current row object
	unq     []byte         // unquoting scratch for names and numbers
	hashes  []uint64       // MAP key hashes for duplicate detection

	// write requests
	idBuf    []byte
	idEnds   []int
	ids      idTable
	deferred []uint64 // per-upsert-entry presence bitsets (see DecodeWrite)
	partial  []bool   // partial-update target columns, by position; nil if none
	// invalid entries (see skipBadEntry)
	valid     []bool     // per entry position: decoded without error
	bad       []Rejected // the invalid entries, in input order
	recovered []byte     // the id entryErr found after an entry's error
}

var (
	statePool sync.Pool
	hashSeed  = maphash.MakeSeed()
)

func getState(c *Codec, buf *Buffer, body []byte, lim Limits) *state {
	st, _ := statePool.Get().(*state)
	if st == nil {
		st = new(state)
	}
	if buf == nil {
		buf = new(Buffer)
	}
	st.buf, st.slab, st.arena = buf, &buf.slab, &buf.arena
	st.c = c
	st.lim = lim.withDefaults()
	// A bytes.Buffer lets jsontext tokenize body in place, without copying.
	st.rd = *bytes.NewBuffer(body)
	st.dec.Reset(&st.rd, decodeOptions...)
	if cap(st.present) < c.words {
		st.present = make([]uint64, c.words)
	}
	st.present = st.present[:c.words]
	return st
}

var emptyReader = bytes.NewReader(nil)

func putState(st *state) {
	// Drop every reference to the request: body, schema, returned memory.
	st.rd = bytes.Buffer{}
	st.dec.Reset(emptyReader)
	st.lim.EntryEnds = nil
	st.c = nil
	st.buf, st.slab, st.arena = nil, nil, nil
	st.path = st.path[:0]
	st.keys = st.keys[:0]
	clear(st.scratch)
	st.scratch = st.scratch[:0]
	st.idBuf = st.idBuf[:0]
	st.idEnds = st.idEnds[:0]
	st.deferred = st.deferred[:0]
	st.partial = nil
	st.valid = st.valid[:0]
	st.bad = nil
	st.recovered = nil
	st.ids.reset()
	if len(st.ids.slots) > 1<<17 || cap(st.idBuf) > 1<<20 || cap(st.scratch) > 1<<12 {
		// Do not pin the memory of an exceptional request.
		return
	}
	statePool.Put(st)
}

// pathString renders the current column path, e.g. a.b[3] or m["k"].
func (st *state) pathString() string {
	var b strings.Builder
	for i, s := range st.path {
		switch s.kind {
		case segName:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(st.c.names[s.a])
		case segIndex:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(int(s.a)))
			b.WriteByte(']')
		case segMapKey:
			b.WriteString(".key")
		case segMapValue:
			b.WriteString(".value")
		case segKey:
			b.WriteByte('[')
			b.WriteString(strconv.Quote(string(st.keys[s.a:s.b])))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// fail builds a fieldError at the current path.
func (st *state) fail(format string, args ...any) error {
	return &fieldError{path: st.pathString(), msg: fmt.Sprintf(format, args...)}
}

// failAt builds a fieldError at the current path extended by name.
func (st *state) failAt(name string, format string, args ...any) error {
	p := st.pathString()
	if p != "" {
		p += "."
	}
	return &fieldError{path: p + name, msg: fmt.Sprintf(format, args...)}
}

// syntaxErr turns a tokenizer error into a fieldError at the current path.
func (st *state) syntaxErr(err error) error {
	return &fieldError{path: st.pathString(), msg: describeSyntax(err), syntax: true}
}

func describeSyntax(err error) string {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return "invalid JSON: unexpected end of input"
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) && se.Err != nil {
		msg := strings.TrimPrefix(se.Err.Error(), "jsontext: ")
		return fmt.Sprintf("invalid JSON at byte offset %d: %s", se.ByteOffset, msg)
	}
	return "invalid JSON: " + strings.TrimPrefix(err.Error(), "jsontext: ")
}

// dupKey reports a repeated member name of a non-row object.
func (st *state) dupKey(name []byte) error {
	return &fieldError{path: st.pathString(), msg: fmt.Sprintf("duplicate key %q", name)}
}

// readName reads an object member name and returns it unquoted. The result
// is valid until the next read.
func (st *state) readName() ([]byte, error) {
	raw, err := st.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	return st.unquote(raw)
}

// readColumn reads a member name of a row object and resolves it to a column
// position (-1 when there is no such column). The raw quoted name is matched
// against the hinted column first, which spares unquoting in the common case;
// name is the unquoted name, nil when the raw match succeeded.
func (st *state) readColumn(hint int) (ci int, name []byte, err error) {
	raw, err := st.dec.ReadValue()
	if err != nil {
		return -1, nil, err
	}
	c := st.c
	if uint(hint) < uint(len(c.cols)) && c.cols[hint].quoted == string(raw) {
		return hint, nil, nil
	}
	if name, err = st.unquote(raw); err != nil {
		return -1, nil, err
	}
	return c.columnIndex(name, -1), name, nil
}

// readField is readColumn for the fields of a ROW value.
func (st *state) readField(t *typ, hint int) (i int, name []byte, err error) {
	raw, err := st.dec.ReadValue()
	if err != nil {
		return -1, nil, err
	}
	if uint(hint) < uint(len(t.fields)) && t.fields[hint].quoted == string(raw) {
		return hint, nil, nil
	}
	if name, err = st.unquote(raw); err != nil {
		return -1, nil, err
	}
	return t.fieldByName(name), name, nil
}

// unquote returns the content of the JSON string raw, unescaping into the
// scratch buffer only when needed.
func (st *state) unquote(raw []byte) ([]byte, error) {
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	var err error
	st.unq, err = jsontext.AppendUnquote(st.unq[:0], raw)
	return st.unq, err
}

// beginObject reads the '{' that must come next.
func (st *state) beginObject(what string) error {
	switch k := st.dec.PeekKind(); k {
	case '{':
		if _, err := st.dec.ReadToken(); err != nil {
			return st.syntaxErr(err)
		}
		return nil
	case 0:
		_, err := st.dec.ReadToken()
		return st.syntaxErr(err)
	default:
		return st.fail("%s must be a JSON object, got %s", what, kindName(k))
	}
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "invalid JSON"
}

// showRaw renders a raw JSON value for an error message, truncated.
func showRaw(raw []byte) string {
	const maxShown = 64
	if len(raw) > maxShown {
		return string(raw[:maxShown]) + "…"
	}
	return string(raw)
}

// invalid wraps a request-level message as an invalid-argument error.
func invalid(format string, args ...any) error {
	return domain.InvalidArgument(format, args...)
}

// idTable is an open-addressing set of entry ids: slots hold entry index + 1
// (0 is empty) and hashes the hash of every entry's id, by entry index. It is
// reused across requests without rehashing costs of a Go map.
type idTable struct {
	slots  []int32
	hashes []uint64
	n      int
}

func (t *idTable) reset() {
	clear(t.slots)
	t.hashes = t.hashes[:0]
	t.n = 0
}

// insert adds entry i with id hash h unless an earlier entry has an equal id
// (same reports whether entry j's id equals the new one); it returns that
// entry, or -1.
func (t *idTable) insert(i int, h uint64, same func(j int) bool) int {
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for p := h & mask; ; p = (p + 1) & mask {
		j := int(t.slots[p]) - 1
		if j < 0 {
			t.slots[p] = int32(i + 1)
			break
		}
		if t.hashes[j] == h && same(j) {
			return j
		}
	}
	t.hashes = append(t.hashes, h)
	t.n++
	return -1
}

func (t *idTable) grow() {
	size := max(2*len(t.slots), 64)
	t.slots = make([]int32, size)
	mask := uint64(size - 1)
	for j, h := range t.hashes {
		p := h & mask
		for t.slots[p] != 0 {
			p = (p + 1) & mask
		}
		t.slots[p] = int32(j + 1)
	}
}
