package rowjson

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The fast path of DecodeWrite.
//
// Most write bodies are {"entries": [...]} with scalar columns, well formed
// and valid. For them, decodeWriteFast scans the body directly instead of
// going through the jsontext state machine (about half of the decode time),
// and turns every value into its Datum with the general decoder's
// conversions (st.scalar, or its common cases inline in fastScalar), given
// exactly the raw bytes jsontext's ReadValue would return. It gives up,
// leaving no trace (rollback), on anything else: another
// top-level member (partial_update_columns), a non-null ARRAY, MAP or ROW
// value, names it does not recognise, a JSON or value error, too many
// entries. The general decoder then decodes the body from the start and
// produces the result, or the exact error, it always did.
//
// The fast path only ever accepts what the general decoder accepts, with the
// same result:
//   - the JSON grammar is checked strictly (RFC 8259: whitespace is space,
//     tab, CR and LF; numbers -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?; the
//     literals null, true, false; no trailing commas; nothing but whitespace
//     after the body);
//   - a string without escapes is accepted only when it has no control
//     character and is valid UTF-8 (what jsontext checks); a string with
//     escapes is only ever used through jsontext.AppendUnquote (st.unquote,
//     st.scalar), which validates it the way the tokenizer does and fails
//     otherwise;
//   - every write rule (ids, operations, columns, nulls, missing columns)
//     is checked by the same code or gives up when it would fail.
//
// FuzzFastPath checks the equivalence against the general decoder.

// strPlain[c] is true for bytes that may appear as is in a JSON string that
// needs no further validation: printable ASCII except '"' and '\\'.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainEnd returns the position of the first byte at or after b[i] that is
// not strPlain, or len(b). It tests eight bytes at a time: in
//
//	m = ((x - 0x20…) | (x^'"'… - 0x01…) | (x^'\\'… - 0x01…) | x) & 0x80…
//
// the top bit of a byte is set when the byte of x is below 0x20, equal to
// '"' or '\\', or at least 0x80 (the subtractions also mark bytes of 0xa0
// and more, which x marks anyway). A borrow only carries a false mark to
// bytes above a true one, so the lowest mark is exact.
func plainEnd(b []byte, i int) int {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	if i >= len(b) {
		return i
	}
	for rest := b[i:]; len(rest) >= 8; rest = rest[8:] {
		x := binary.LittleEndian.Uint64(rest)
		m := (x - ones*0x20) | (x ^ ones*'"' - ones) | (x ^ ones*'\\' - ones) | x
		if m &= high; m != 0 {
			return len(b) - len(rest) + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && strPlain[b[i]] {
		i++
	}
	return i
}

// quotedMatcher tests whether a body continues with a given quoted name. A
// name of at most 16 bytes (quotes included) is compared as two masked
// 64-bit words when 16 bytes of body are left.
type quotedMatcher struct {
	s    string
	n    int // len(s)
	w, m [2]uint64
}

func newQuotedMatcher(s string) quotedMatcher {
	qm := quotedMatcher{s: s, n: len(s)}
	if len(s) <= 16 {
		for i := 0; i < len(s); i++ {
			qm.w[i/8] |= uint64(s[i]) << (8 * (i % 8))
			qm.m[i/8] |= 0xff << (8 * (i % 8))
		}
	}
	return qm
}

// at reports whether b[i:] starts with the name; it returns the position
// after it.
func (qm *quotedMatcher) at(b []byte, i int) (int, bool) {
	if i+16 > len(b) || qm.m[0] == 0 {
		return qm.atSlow(b, i)
	}
	w := b[i : i+16 : i+16]
	if binary.LittleEndian.Uint64(w)&qm.m[0] != qm.w[0] || binary.LittleEndian.Uint64(w[8:])&qm.m[1] != qm.w[1] {
		return i, false
	}
	return i + qm.n, true
}

func (qm *quotedMatcher) atSlow(b []byte, i int) (int, bool) {
	end := i + len(qm.s)
	if end <= len(b) && string(b[i:end]) == qm.s {
		return end, true
	}
	return i, false
}

// skipName consumes the quoted name of qm if it comes next.
func (s *fastScanner) skipName(qm *quotedMatcher) bool {
	pos, ok := qm.at(s.b, s.pos)
	s.pos = pos
	return ok
}

var (
	nameEntries = newQuotedMatcher(`"entries"`)
	nameID      = newQuotedMatcher(`"id"`)
	nameUpsert  = newQuotedMatcher(`"upsert"`)
	nameAppend  = newQuotedMatcher(`"append"`)
	nameDelete  = newQuotedMatcher(`"delete"`)
)

// fastMark records the Buffer's allocation state so that a fast-path attempt
// can be undone.
type fastMark struct {
	slabCI, slabOff int
	arenaCI         int
	arenaBuf        []byte
	arenaLarge      bool
	used            bool
}

func (st *state) markBuffer() fastMark {
	return fastMark{
		slabCI: st.slab.ci, slabOff: st.slab.off,
		arenaCI: st.arena.ci, arenaBuf: st.arena.buf, arenaLarge: st.arena.large,
		used: st.buf.used,
	}
}

// rollback undoes a fast-path attempt: Buffer memory handed out since m is
// free again, ids are forgotten.
func (st *state) rollback(m fastMark) {
	s := st.slab
	s.ci, s.off = m.slabCI, m.slabOff
	// Chunks written by the attempt must be cleared when handed out again.
	s.dirty = len(s.chunks)
	a := st.arena
	a.ci, a.buf, a.large = m.arenaCI, m.arenaBuf, m.arenaLarge
	if a.buf == nil && len(a.chunks) > 0 {
		// The arena had no chunk at the mark: start again with the first.
		a.ci, a.buf = 0, a.chunks[0][:0]
	}
	st.buf.used = m.used
	st.idBuf = st.idBuf[:0]
	st.idEnds = st.idEnds[:0]
	st.ids.reset()
	st.path = st.path[:0]
	st.keys = st.keys[:0]
}

// fastScanner is a position in the body.
type fastScanner struct {
	b   []byte
	pos int
}

// ws skips whitespace and returns the next byte, 0 at the end.
func (s *fastScanner) ws() byte {
	for s.pos < len(s.b) {
		c := s.b[s.pos]
		if c > ' ' {
			return c
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
		s.pos++
	}
	return 0
}

// str scans the JSON string at s.pos (which must be '"') and returns its raw
// bytes, quotes included. escaped reports backslashes: the string is then
// not validated and must go through jsontext.AppendUnquote. ok is false for
// an unterminated or invalid string.
func (s *fastScanner) str() (raw []byte, escaped, ok bool) {
	b := s.b
	start := s.pos
	i := plainEnd(b, start+1)
	if i < len(b) && b[i] == '"' {
		s.pos = i + 1
		return b[start : i+1], false, true
	}
	ascii := true
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			if !escaped && !ascii && !utf8.Valid(b[start+1:i]) {
				return nil, false, false
			}
			s.pos = i + 1
			return b[start : i+1], escaped, true
		case c == '\\':
			escaped = true
			i += 2
		case c < ' ':
			return nil, false, false
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			i++
		}
	}
	return nil, false, false
}

// skipWS returns the position of the first byte at or after b[i] that is
// not JSON whitespace.
func skipWS(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// hasLiteral reports whether b[i:] starts with lit.
func hasLiteral(b []byte, i int, lit string) bool {
	return i+len(lit) <= len(b) && string(b[i:i+len(lit)]) == lit
}

// numberEnd returns the end of the JSON number at b[i:].
func numberEnd(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i]-'1' < 9:
		i++
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
		if i == d {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
		if i == d {
			return 0, false
		}
	}
	return i, true
}

// colon consumes whitespace, ':' and whitespace.
func (s *fastScanner) colon() bool {
	if s.pos < len(s.b) && s.b[s.pos] == ':' {
		s.pos++
		return true
	}
	if s.ws() != ':' {
		return false
	}
	s.pos++
	return true
}

// decodeWriteFast is the fast path of decodeWrite; ok is false when it gave
// up, the Buffer and state being then as they were before.
func (st *state) decodeWriteFast(body []byte) (batch domain.WriteBatch, ids []string, ok bool) {
	if st.partial != nil {
		return batch, nil, false
	}
	m := st.markBuffer()
	entries, ok := st.fastBody(body)
	if !ok {
		st.rollback(m)
		return batch, nil, false
	}
	batch.Entries = entries
	batch, ids = st.finishWrite(batch)
	return batch, ids, true
}

// fastBody scans {"entries": [...]} and returns the entries.
func (st *state) fastBody(body []byte) (entries []domain.WriteEntry, ok bool) {
	s := fastScanner{b: body}
	if s.ws() != '{' {
		return nil, false
	}
	s.pos++
	if s.ws() != '"' || !s.skipName(&nameEntries) || !s.colon() || s.ws() != '[' {
		return nil, false
	}
	s.pos++
	// The entries array is reused after Buffer.Reset, as in st.entries.
	own := !st.buf.used
	if own {
		entries = st.buf.entries[:0]
		st.buf.used = true
	}
	entries, ok = st.fastEntries(&s, entries)
	if own {
		st.buf.entries = entries[:0]
	}
	return entries, ok
}

// fastEntries scans the entries array after its '[' and the rest of the body.
func (st *state) fastEntries(s *fastScanner, entries []domain.WriteEntry) ([]domain.WriteEntry, bool) {
	body := s.b
	nc := len(st.c.cols)
	pkTable := st.c.IsPrimaryKeyTable()
	for i := 0; ; i++ {
		if i >= st.lim.MaxEntries {
			return entries, false
		}
		if s.ws() != '{' {
			return entries, false
		}
		s.pos++
		var e domain.WriteEntry
		haveID := false
		for {
			if s.ws() != '"' {
				return entries, false
			}
			var op domain.WriteOp
			switch {
			case s.skipName(&nameID):
				if haveID || !s.colon() || s.ws() != '"' || !st.fastID(s, i) {
					return entries, false
				}
				haveID = true
			case s.skipName(&nameUpsert):
				op = domain.OpUpsert
			case s.skipName(&nameAppend):
				op = domain.OpAppend
			case s.skipName(&nameDelete):
				op = domain.OpDelete
			default:
				return entries, false
			}
			if op != 0 {
				if e.Op != 0 || (op == domain.OpAppend) == pkTable || !s.colon() {
					return entries, false
				}
				e.Op = op
				e.Row = st.slab.alloc(nc)
				if !st.fastRow(s, op, e.Row) {
					return entries, false
				}
			}
			c := s.ws()
			s.pos++
			if c == '}' {
				break
			}
			if c != ',' {
				return entries, false
			}
		}
		if !haveID || e.Op == 0 {
			return entries, false
		}
		if ends := st.lim.EntryEnds; ends != nil && (i >= len(ends) || s.pos != ends[i]) {
			return entries, false
		}
		entries = append(entries, e)
		c := s.ws()
		s.pos++
		if c == ']' {
			break
		}
		if c != ',' {
			return entries, false
		}
	}
	if ends := st.lim.EntryEnds; ends != nil && len(entries) != len(ends) {
		return entries, false
	}
	if s.ws() != '}' {
		return entries, false
	}
	s.pos++
	if s.ws() != 0 || s.pos != len(body) {
		return entries, false
	}
	return entries, true
}

// fastID reads entries[i].id at s.pos ('"').
func (st *state) fastID(s *fastScanner, i int) bool {
	raw, escaped, ok := s.str()
	if !ok || len(raw) == 2 {
		return false
	}
	id := raw[1 : len(raw)-1]
	if escaped {
		var err error
		if id, err = st.unquote(raw); err != nil {
			return false
		}
	}
	return st.addID(i, id) == nil
}

// fastRow reads the row object of an operation into row. It works on a
// local copy of the position (the hot loop of the fast path).
func (st *state) fastRow(s *fastScanner, op domain.WriteOp, row []domain.Datum) bool {
	b := s.b
	i := skipWS(b, s.pos)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	c := st.c
	cols := c.cols
	present := st.present
	clear(present)
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		s.pos = i + 1
		return st.fillMissing(op, row) == nil
	}
	hint := 0
	for {
		// The member name: the column after the previous one, usually.
		if i >= len(b) || b[i] != '"' {
			return false
		}
		ci := -1
		if hint < len(cols) {
			// quotedMatcher.at, inline.
			qm := &cols[hint].match
			if i+16 <= len(b) && qm.m[0] != 0 {
				w := b[i : i+16 : i+16]
				if binary.LittleEndian.Uint64(w)&qm.m[0] == qm.w[0] && binary.LittleEndian.Uint64(w[8:])&qm.m[1] == qm.w[1] {
					ci, i = hint, i+qm.n
				}
			} else if end, ok := qm.atSlow(b, i); ok {
				ci, i = hint, end
			}
		}
		if ci < 0 {
			s.pos = i
			raw, escaped, ok := s.str()
			if !ok {
				return false
			}
			i = s.pos
			name := raw[1 : len(raw)-1]
			if escaped {
				var err error
				if name, err = st.unquote(raw); err != nil {
					return false
				}
			}
			if ci = c.columnIndex(name, -1); ci < 0 {
				return false
			}
		}
		col := &cols[ci]
		w, bit := ci>>6, uint64(1)<<(ci&63)
		if present[w]&bit != 0 || (op == domain.OpDelete && !col.pk) || col.autoInc {
			return false
		}
		present[w] |= bit
		if i < len(b) && b[i] == ':' {
			i++
		} else if i = skipWS(b, i); i < len(b) && b[i] == ':' {
			i++
		} else {
			return false
		}

		// The value.
		i = skipWS(b, i)
		if i >= len(b) {
			return false
		}
		var raw []byte
		escaped := false
		switch b[i] {
		case '"':
			if j := plainEnd(b, i+1); j < len(b) && b[j] == '"' {
				raw, i = b[i:j+1], j+1
			} else {
				s.pos = i
				var ok bool
				if raw, escaped, ok = s.str(); !ok {
					return false
				}
				i = s.pos
			}
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			j, ok := numberEnd(b, i)
			if !ok {
				return false
			}
			raw, i = b[i:j], j
		case 'n':
			if !hasLiteral(b, i, "null") {
				return false
			}
			raw, i = b[i:i+4], i+4
		case 't':
			if !hasLiteral(b, i, "true") {
				return false
			}
			raw, i = b[i:i+4], i+4
		case 'f':
			if !hasLiteral(b, i, "false") {
				return false
			}
			raw, i = b[i:i+5], i+5
		default:
			return false // objects, arrays: left to the general decoder
		}
		d := &row[ci]
		t := col.t
		switch {
		case raw[0] == 'n':
			if !t.nullable || col.pk {
				return false
			}
			d.Null = true
		case escaped:
			if t.kind >= kArray || st.scalar(d, t, raw) != nil {
				return false
			}
		default:
			if !st.fastScalar(d, t, raw) {
				return false
			}
		}
		hint = ci + 1

		// A comma and the next name, or the end of the object.
		if i < len(b) && b[i] == ',' {
			i = skipWS(b, i+1)
			continue
		}
		if i = skipWS(b, i); i < len(b) {
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
				continue
			case '}':
				s.pos = i + 1
				return st.fillMissing(op, row) == nil
			}
		}
		return false
	}
}

// fastScalar is st.scalar for a raw value that is not null and, if a string,
// has no escapes (so its content is raw without the quotes), with the most
// common cases inline. It reports false on any error.
func (st *state) fastScalar(d *domain.Datum, t *typ, raw []byte) bool {
	str := raw[0] == '"'
	switch t.kind {
	case kChar, kString:
		if !str {
			return false
		}
		b := st.arena.copy(raw[1 : len(raw)-1])
		if t.kind == kChar && len(b) > t.length && utf8.RuneCount(b) > t.length {
			return false
		}
		d.Bytes = b
		return true
	case kTinyInt, kSmallInt, kInt, kBigInt:
		lex := raw
		if str {
			lex = raw[1 : len(raw)-1]
		}
		v, code := parseIntLex(lex, t.intMin, t.intMax)
		d.I64 = v
		return code == intOK
	case kDecimal:
		switch {
		case str:
			return st.decimal(d, t, raw, raw[1:len(raw)-1]) == nil
		case raw[0] == 't' || raw[0] == 'f':
			return false
		}
		return st.decimal(d, t, raw, raw) == nil
	case kTsNTZ, kTsLTZ:
		if str {
			ms, nanos, msg := parseTimestamp(raw[1:len(raw)-1], t.kind == kTsLTZ, t.precision)
			d.I64, d.Nanos = ms, nanos
			return msg == ""
		}
	case kBinary, kBytes:
		if !str {
			return false
		}
		s := raw[1 : len(raw)-1]
		r := st.arena.reserve(len(s) / 4 * 3)
		n, bad := decodeBase64(r[:cap(r)], s)
		if bad >= 0 || (t.kind == kBinary && n != t.length) {
			return false
		}
		d.Bytes = st.arena.commit(r[:n])
		return true
	case kFloat, kDouble:
		if v, ok := exactFloat(raw); ok {
			if t.kind == kFloat {
				f := float32(v)
				if math.IsInf(float64(f), 0) {
					return false
				}
				v = float64(f)
			}
			d.F64 = v
			return true
		}
	case kDate:
		if str && len(raw) == len(`"2006-01-02"`) {
			s := raw[1 : len(raw)-1]
			days, n, msg := parseDate(s)
			if msg == "" && n == len(s) && days >= math.MinInt32 && days <= math.MaxInt32 {
				d.I64 = days
				return true
			}
		}
	case kArray, kMap, kRow:
		return false // not scanned by scalarValue
	}
	return st.scalar(d, t, raw) == nil
}

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactFloat converts a JSON number (raw, as numberEnd scanned it:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) of at most 15 significant
// digits whose decimal exponent is within ±22 to the nearest float64, as
// strconv.ParseFloat does: the digits make an integer below 2^53 and the
// power of ten is exact, so one multiplication or division rounds
// correctly (Clinger's fast path, which strconv takes for such numbers
// too, behind its general parser). ok is false for any other number (and
// for anything not a number), left to strconv.ParseFloat.
func exactFloat(raw []byte) (v float64, ok bool) {
	i, neg := 0, false
	if i < len(raw) && raw[i] == '-' {
		neg, i = true, 1
	}
	var mant uint64
	digits, exp := 0, 0
	from := i
	for ; i < len(raw) && raw[i]-'0' <= 9; i++ {
		mant = mant*10 + uint64(raw[i]-'0')
		if mant != 0 {
			digits++
		}
	}
	if i == from {
		return 0, false
	}
	if i < len(raw) && raw[i] == '.' {
		from = i + 1
		for i++; i < len(raw) && raw[i]-'0' <= 9; i++ {
			mant = mant*10 + uint64(raw[i]-'0')
			if mant != 0 {
				digits++
			}
			exp--
		}
		if i == from {
			return 0, false
		}
	}
	if digits > 15 {
		return 0, false
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		eneg := false
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			eneg, i = raw[i] == '-', i+1
		}
		e := 0
		if i == len(raw) {
			return 0, false
		}
		for ; i < len(raw) && raw[i]-'0' <= 9; i++ {
			if e > 1000 {
				return 0, false
			}
			e = e*10 + int(raw[i]-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(raw) || raw[i-1]-'0' > 9 {
		return 0, false
	}
	switch f := float64(mant); {
	case mant == 0:
		v = 0
	case exp >= 0 && exp < len(exactPow10):
		v = f * exactPow10[exp]
	case exp < 0 && -exp < len(exactPow10):
		v = f / exactPow10[-exp]
	default:
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}
