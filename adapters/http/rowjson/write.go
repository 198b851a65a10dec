package rowjson

import (
	"bytes"
	"errors"
	"hash/maphash"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// DecodeWrite decodes a write request body
//
//	{"partial_update_columns": ["a", "b"],            (optional)
//	 "entries": [{"id": "e1", "upsert": {col: value, …}},
//	             {"id": "e2", "delete": {pk col: value, …}},
//	             {"id": "e3", "append": {col: value, …}}]}
//
// into a batch (Entries, PartialUpdateColumns; the caller sets Table, TableID
// and SchemaID) and the entry ids in input order. Every Row has one Datum per
// table column; omitted columns are null (for deletes, the non-key columns).
// Rows and their bytes live in memory owned by the returned batch.
//
// A body that breaks a rule yields a KindInvalidArgument *domain.Error whose
// message names the entry and the column path, e.g.
// "entry `e2`: column `a.b[3]`: …", or "entries[5]: …" for an entry without a
// usable id; more entries than lim.MaxEntries is KindLimitExceeded. Every
// invalid entry is named, in input order (up to MaxNamedInvalid, then "and N
// more"), and nothing is returned; see DecodeWriteReport for the valid
// entries of such a body.
func (c *Codec) DecodeWrite(body []byte, lim Limits) (domain.WriteBatch, []string, error) {
	return c.DecodeWriteTo(nil, body, lim)
}

// DecodeWriteTo is DecodeWrite with the rows' memory taken from buf (see
// Buffer); a nil buf means a fresh one. The ids never alias buf.
func (c *Codec) DecodeWriteTo(buf *Buffer, body []byte, lim Limits) (domain.WriteBatch, []string, error) {
	return c.decodeWriteTo(buf, body, lim, true)
}

// DecodeWriteReport is DecodeWriteTo for a body whose invalid entries are
// answered one by one: the batch and ids hold the valid entries, in input
// order, and rejected the invalid ones (each with its position in the body
// and its id). The body as a whole must still be well-formed, and every
// invalid entry must have a usable, unique id; otherwise the error is the
// 400 DecodeWriteTo gives.
func (c *Codec) DecodeWriteReport(buf *Buffer, body []byte, lim Limits) (domain.WriteBatch, []string, []Rejected, error) {
	lim.ReportInvalid = true
	return c.decodeWriteAll(buf, body, lim, true)
}

// decodeWriteTo is DecodeWriteTo; fast selects trying the fast path first
// (see fast.go; tests compare both ways).
func (c *Codec) decodeWriteTo(buf *Buffer, body []byte, lim Limits, fast bool) (domain.WriteBatch, []string, error) {
	lim.ReportInvalid = false
	batch, ids, _, err := c.decodeWriteAll(buf, body, lim, fast)
	return batch, ids, err
}

// decodeWriteAll is decodeWriteTo returning the rejected entries under
// lim.ReportInvalid.
func (c *Codec) decodeWriteAll(buf *Buffer, body []byte, lim Limits, fast bool) (batch domain.WriteBatch, ids []string, bad []Rejected, err error) {
	if c.writeErr != nil {
		return domain.WriteBatch{}, nil, nil, c.writeErr
	}
	st := getState(c, buf, body, lim)
	defer putState(st)
	// A Buffer's ChargeFunc refusal ends the decode with its error and
	// nothing else.
	defer func() {
		if r := recover(); r != nil {
			batch, ids, bad, err = domain.WriteBatch{}, nil, nil, chargeRefusal(r)
		}
	}()
	if fast {
		if batch, ids, ok := st.decodeWriteFast(body); ok {
			return batch, ids, nil, nil
		}
	}
	batch, ids, err = st.decodeWrite()
	if errors.Is(err, ErrEntryBounds) {
		return domain.WriteBatch{}, nil, nil, err
	}
	if err != nil {
		return batch, ids, nil, malformedFirst(body, err)
	}
	return batch, ids, st.bad, nil
}

// malformedFirst returns the syntax error of body when body is not one valid
// JSON value, else err: as with the official decoder (which parses the whole
// body before any row), malformed JSON anywhere wins over every other
// problem, even one found earlier in the body. It runs on the error path
// only and is linear in the body.
func malformedFirst(body []byte, err error) error {
	if de := domain.AsError(err); de != nil && strings.Contains(de.Message, "invalid JSON") {
		return err
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body), decodeOptions...)
	serr := dec.SkipValue()
	if serr == nil {
		if _, serr = dec.ReadToken(); serr == io.EOF {
			return err
		}
		if serr == nil {
			return invalid("unexpected data after the request body's JSON object")
		}
	}
	return invalid("%s", describeSyntax(serr))
}

func (st *state) decodeWrite() (domain.WriteBatch, []string, error) {
	var batch domain.WriteBatch
	if err := st.beginObject("the request body"); err != nil {
		return batch, nil, topErr(err)
	}
	var sawEntries, sawPartial bool
	for {
		if st.dec.PeekKind() == '}' {
			break
		}
		name, err := st.readName()
		if err != nil {
			return batch, nil, topErr(st.syntaxErr(err))
		}
		switch string(name) {
		case "partial_update_columns":
			if sawPartial {
				return batch, nil, topErr(st.dupKey(name))
			}
			sawPartial = true
			cols, err := st.partialColumns()
			if err != nil {
				return batch, nil, err
			}
			batch.PartialUpdateColumns = cols
			if sawEntries && cols != nil {
				if err := st.checkDeferredPartial(batch.Entries); err != nil {
					return batch, nil, err
				}
			}
		case "entries":
			if sawEntries {
				return batch, nil, topErr(st.dupKey(name))
			}
			sawEntries = true
			entries, err := st.entries(!sawPartial)
			if err != nil {
				return batch, nil, err
			}
			batch.Entries = entries
		default:
			return batch, nil, invalid("unknown field `%s` in the request body (expected `entries` and optionally `partial_update_columns`)", cutName(string(name)))
		}
	}
	if err := st.endTopLevel(); err != nil {
		return batch, nil, err
	}
	if !sawEntries {
		return batch, nil, invalid("missing `entries`")
	}
	if len(st.bad) > 0 && !st.lim.ReportInvalid {
		return domain.WriteBatch{}, nil, invalidEntries(st.bad, len(st.valid))
	}
	if st.lim.ReportInvalid {
		for _, r := range st.bad {
			if r.ID == "" {
				// An entry without a usable id cannot be given a verdict.
				return domain.WriteBatch{}, nil, invalidEntries(st.bad, len(st.valid))
			}
		}
	}
	batch, ids := st.finishWrite(batch)
	return batch, ids, nil
}

// finishWrite completes a decoded batch: target columns on tables with
// auto-increment columns, and the entry ids.
func (st *state) finishWrite(batch domain.WriteBatch) (domain.WriteBatch, []string) {
	if batch.PartialUpdateColumns == nil && len(st.c.autoInc) > 0 {
		// Fluss requires an explicit target-column list on tables with an
		// auto-increment column: write every other column.
		for i := range st.c.cols {
			if !st.c.cols[i].autoInc {
				batch.PartialUpdateColumns = append(batch.PartialUpdateColumns, i)
			}
		}
	}
	all := string(st.idBuf)
	ids := make([]string, 0, len(st.idEnds))
	prev := 0
	for i, end := range st.idEnds {
		if i >= len(st.valid) || st.valid[i] {
			ids = append(ids, all[prev:end])
		}
		prev = end
	}
	return batch, ids
}

// endTopLevel consumes the closing '}' and checks that nothing follows.
func (st *state) endTopLevel() error {
	if _, err := st.dec.ReadToken(); err != nil {
		return topErr(st.syntaxErr(err))
	}
	if _, err := st.dec.ReadToken(); err != io.EOF {
		if err != nil {
			return topErr(st.syntaxErr(err))
		}
		return invalid("unexpected data after the request body's JSON object")
	}
	return nil
}

// topErr turns a fieldError outside any entry into a domain error.
func topErr(err error) error {
	if fe, ok := err.(*fieldError); ok {
		return fieldInvalid(fe, "%s", fe.Error())
	}
	return err
}

// partialColumns decodes partial_update_columns into sorted positions and
// checks them as the official gateway does: only on primary-key tables;
// every primary-key column included; no auto-increment column; every column
// left out nullable (see below). A JSON null means no partial update.
func (st *state) partialColumns() ([]int, error) {
	c := st.c
	switch k := st.dec.PeekKind(); k {
	case 'n':
		if _, err := st.dec.ReadToken(); err != nil {
			return nil, topErr(st.syntaxErr(err))
		}
		return nil, nil
	case '[':
	default:
		return nil, invalid("partial_update_columns: must be a JSON array of column names, got %s", kindName(k))
	}
	if !c.IsPrimaryKeyTable() {
		return nil, invalid("partial_update_columns: partial updates need a primary-key table")
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return nil, topErr(st.syntaxErr(err))
	}
	target := make([]bool, len(c.cols))
	for i := 0; st.dec.PeekKind() != ']'; i++ {
		raw, err := st.dec.ReadValue()
		if err != nil {
			return nil, topErr(st.syntaxErr(err))
		}
		if raw[0] != '"' {
			return nil, invalid("partial_update_columns[%d]: must be a column name string, got %s", i, kindName(jsontext.Value(raw).Kind()))
		}
		name, err := st.unquote(raw)
		if err != nil {
			return nil, topErr(st.syntaxErr(err))
		}
		ci := c.columnIndex(name, -1)
		switch {
		case ci < 0:
			return nil, domain.UnknownColumn("partial_update_columns[%d]: no such column `%s`", i, name)
		case target[ci]:
			return nil, invalid("partial_update_columns[%d]: column `%s` listed twice", i, name)
		case c.cols[ci].autoInc:
			return nil, invalid("partial_update_columns[%d]: `%s` is an auto-increment column; Fluss assigns its value", i, name)
		}
		target[ci] = true
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return nil, topErr(st.syntaxErr(err))
	}
	if !slices.Contains(target, true) {
		return nil, invalid("partial_update_columns: must not be empty (leave it out to write whole rows)")
	}
	for _, ci := range c.pk {
		if !target[ci] {
			return nil, invalid("partial_update_columns: must include the primary-key column `%s`", c.cols[ci].name)
		}
	}
	// The official gateway (fluss-gateway/openapi.yaml, WriteBody
	// partial_update_columns) only requires the columns left out to be
	// nullable, but Fluss's tablet server (PartialUpdater.sanityCheck in
	// apache/fluss 0.9.1 and at 1.0-SNAPSHOT commit 545c55390) refuses a
	// partial update while any column outside the primary key is NOT NULL,
	// targeted or not, and every entry would fail with
	// INVALID_TARGET_COLUMN. No released server is known to allow it, so
	// the request is refused up front. The auto-increment column is left out
	// and Fluss assigns it (as without partial_update_columns, see
	// finishWrite).
	for i := range c.cols {
		col := &c.cols[i]
		if col.pk || col.t.nullable || col.autoInc {
			continue
		}
		how := "the omitted column"
		if target[i] {
			how = "the target column"
		}
		return nil, invalid("partial_update_columns: %s `%s` is NOT NULL; Fluss refuses partial updates unless every column outside the primary key is nullable (%q); make it nullable or write whole rows",
			how, col.name, "Partial Update requires all columns except primary key to be nullable")
	}
	cols := make([]int, 0, len(c.cols))
	for i, ok := range target {
		if ok {
			cols = append(cols, i)
		}
	}
	st.partial = target
	return cols, nil
}

// checkDeferredPartial applies the partial-update column rule to upsert
// entries decoded before partial_update_columns was seen.
func (st *state) checkDeferredPartial(entries []domain.WriteEntry) error {
	w := st.c.words
	u := 0
	for i := range entries {
		if entries[i].Op != domain.OpUpsert {
			continue
		}
		present := st.deferred[u*w : (u+1)*w]
		u++
		for ci, ok := range st.partial {
			if !ok && present[ci>>6]&(1<<(ci&63)) != 0 {
				return invalid("%s: column `%s`: not in partial_update_columns", st.entryName(st.position(i)), st.c.cols[ci].name)
			}
		}
	}
	return nil
}

// position returns the body position of the i-th valid entry (they differ
// once invalid entries were skipped, see skipBadEntry).
func (st *state) position(i int) int {
	if len(st.bad) == 0 {
		return i
	}
	for p, ok := range st.valid {
		if ok {
			if i == 0 {
				return p
			}
			i--
		}
	}
	return i
}

// entryName renders a decoded entry's name from its id.
func (st *state) entryName(i int) string {
	start := 0
	if i > 0 {
		start = st.idEnds[i-1]
	}
	return "entry `" + string(st.idBuf[start:st.idEnds[i]]) + "`"
}

// entries decodes the entries array. deferPartial records which columns each
// upsert carries, for partial_update_columns arriving later.
func (st *state) entries(deferPartial bool) ([]domain.WriteEntry, error) {
	if k := st.dec.PeekKind(); k != '[' {
		if k == 0 {
			_, err := st.dec.ReadToken()
			return nil, topErr(st.syntaxErr(err))
		}
		return nil, invalid("entries: must be a JSON array, got %s", kindName(k))
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return nil, topErr(st.syntaxErr(err))
	}
	arrDepth := st.dec.StackDepth()
	// The entries array is reused after Buffer.Reset; without one, the
	// previous batch decoded into the buffer keeps its own.
	var entries []domain.WriteEntry
	if !st.buf.used {
		entries = st.buf.entries[:0]
		st.buf.used = true
		defer func() { st.buf.entries = entries[:0] }()
	}
	for i := 0; ; i++ {
		if st.dec.PeekKind() == ']' {
			break
		}
		if i >= st.lim.MaxEntries {
			return nil, &domain.Error{Kind: domain.KindLimitExceeded,
				Message: "entries: more than " + strconv.Itoa(st.lim.MaxEntries) + " entries"}
		}
		nDeferred := len(st.deferred)
		st.recovered = nil
		_, before := st.dec.StackIndex(arrDepth)
		e, err := st.entry(i, deferPartial)
		if err != nil {
			if _, after := st.dec.StackIndex(arrDepth); after == before && st.dec.StackDepth() == arrDepth {
				// The entry was refused before being read (not an object).
				if st.dec.SkipValue() != nil {
					return nil, err
				}
			}
			if !st.skipBadEntry(i, arrDepth, err) {
				return nil, err
			}
			if !st.entryEndsAt(i) {
				return nil, ErrEntryBounds
			}
			st.deferred = st.deferred[:nDeferred]
			continue
		}
		if !st.entryEndsAt(i) {
			return nil, ErrEntryBounds
		}
		st.valid = append(st.valid, true)
		entries = append(entries, e)
	}
	if ends := st.lim.EntryEnds; ends != nil && len(st.valid) != len(ends) {
		return nil, ErrEntryBounds
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return nil, topErr(st.syntaxErr(err))
	}
	if len(entries) == 0 && len(st.bad) == 0 {
		return nil, invalid("entries: must contain at least one entry")
	}
	return entries, nil
}

// entryEndsAt reports whether entries[i], just read, ends where
// Limits.EntryEnds wants it (always true without EntryEnds).
func (st *state) entryEndsAt(i int) bool {
	ends := st.lim.EntryEnds
	return ends == nil || i < len(ends) && int(st.dec.InputOffset()) == ends[i]
}

// MaxNamedInvalid bounds the invalid entries a 400 message names; the rest
// are counted ("and N more").
const MaxNamedInvalid = 100

// Rejected is an invalid entry of a write body, found while the other
// entries were decoded: its position, its id ("" when the entry has no
// usable id) and the message naming it and its column path.
type Rejected struct {
	Index   int
	ID      string
	Message string
	// UnknownColumn tells that the entry names a column the schema does
	// not have (domain.ErrUnknownColumn).
	UnknownColumn bool
}

// skipBadEntry records err, an invalid entries[i], and moves the decoder to
// the end of that entry so that decoding goes on with the next one (the
// entries array is at stack depth arrDepth). It reports false when decoding
// cannot go on: err is not about one entry (a limit, malformed JSON), or the
// rest of the entry is not well-formed.
func (st *state) skipBadEntry(i, arrDepth int, err error) bool {
	de := domain.AsError(err)
	if de == nil || de.Kind != domain.KindInvalidArgument || strings.Contains(de.Message, "invalid JSON") {
		return false
	}
	for st.dec.StackDepth() > arrDepth {
		if k := st.dec.PeekKind(); k == '}' || k == ']' {
			if _, e := st.dec.ReadToken(); e != nil {
				return false
			}
		} else if k == 0 || st.dec.SkipValue() != nil {
			return false
		}
	}
	if st.dec.StackDepth() < arrDepth {
		return false
	}
	// Keep ids aligned with entry positions: the entry's id, when it was
	// read or recovered (and is not a duplicate), else an empty one.
	id := ""
	if len(st.idEnds) == i && st.recovered != nil {
		if st.addID(i, st.recovered) != nil {
			st.idEnds = append(st.idEnds, len(st.idBuf))
		}
	}
	if len(st.idEnds) == i {
		st.idEnds = append(st.idEnds, len(st.idBuf))
	}
	if len(st.idEnds) > i {
		id = string(st.idOf(i))
	}
	if strings.HasPrefix(de.Message, "entry `") && strings.Contains(de.Message, "duplicate id") {
		id = "" // the id names another entry
	}
	st.valid = append(st.valid, false)
	st.bad = append(st.bad, Rejected{Index: i, ID: id, Message: de.Message, UnknownColumn: domain.IsUnknownColumn(de)})
	return true
}

// invalidEntries is the 400 of a body with invalid entries: every one named
// (up to MaxNamedInvalid, then a count), in input order.
// The error carries domain.ErrUnknownColumn when one of them names a column
// the schema does not have.
func invalidEntries(bad []Rejected, total int) error {
	mk := invalid
	for _, r := range bad {
		if r.UnknownColumn {
			mk = func(format string, args ...any) error { return domain.UnknownColumn(format, args...) }
			break
		}
	}
	if len(bad) == 1 {
		return mk("%s", bad[0].Message)
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(bad)))
	b.WriteString(" of ")
	b.WriteString(strconv.Itoa(total))
	b.WriteString(" entries are invalid: ")
	for i, r := range bad {
		if i == MaxNamedInvalid {
			b.WriteString("; and ")
			b.WriteString(strconv.Itoa(len(bad) - MaxNamedInvalid))
			b.WriteString(" more")
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.Message)
	}
	return mk("%s", b.String())
}

// Operation names as they appear in messages.
var opNames = [...]string{domain.OpUpsert: "`upsert`", domain.OpDelete: "`delete`", domain.OpAppend: "`append`"}

// entry decodes entries[i].
func (st *state) entry(i int, deferPartial bool) (domain.WriteEntry, error) {
	var e domain.WriteEntry
	if k := st.dec.PeekKind(); k != '{' {
		if k == 0 {
			_, err := st.dec.ReadToken()
			return e, st.entryErr(i, false, -1, st.syntaxErr(err))
		}
		return e, invalid("entries[%d]: must be a JSON object, got %s", i, kindName(k))
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return e, st.entryErr(i, false, -1, st.syntaxErr(err))
	}
	depth := st.dec.StackDepth()
	haveID := false
	for {
		if st.dec.PeekKind() == '}' {
			break
		}
		raw, err := st.dec.ReadValue()
		if err != nil {
			return e, st.entryErr(i, haveID, depth, st.syntaxErr(err))
		}
		name := raw[1 : len(raw)-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			if name, err = st.unquote(raw); err != nil {
				return e, st.entryErr(i, haveID, depth, st.syntaxErr(err))
			}
		}
		var op domain.WriteOp
		switch string(name) {
		case "id":
			if haveID {
				return e, st.entryErr(i, true, depth, st.dupKey(name))
			}
			if err := st.entryID(i); err != nil {
				return e, err
			}
			haveID = true
			continue
		case "upsert":
			op = domain.OpUpsert
		case "delete":
			op = domain.OpDelete
		case "append":
			op = domain.OpAppend
		default:
			return e, st.entryErr(i, haveID, depth, &fieldError{msg: "unknown field `" + cutName(string(name)) +
				"` (an entry has `id` and one of `upsert`, `delete`, `append`)"})
		}
		if e.Op == op {
			return e, st.entryErr(i, haveID, depth, st.dupKey(name))
		}
		if e.Op != 0 {
			return e, st.entryErr(i, haveID, depth, &fieldError{msg: "more than one operation (" +
				opNames[e.Op] + " and " + opNames[op] + ")"})
		}
		e.Op = op
		if msg := st.opAllowed(op); msg != "" {
			return e, st.entryErr(i, haveID, depth, &fieldError{msg: msg})
		}
		e.Row = st.slab.alloc(len(st.c.cols))
		if err := st.writeRow(op, e.Row); err != nil {
			return e, st.entryErr(i, haveID, depth, err)
		}
		if op == domain.OpUpsert && deferPartial && st.partial == nil {
			st.deferred = append(st.deferred, st.present...)
		}
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return e, st.entryErr(i, haveID, depth, st.syntaxErr(err))
	}
	if !haveID {
		return e, invalid("entries[%d]: missing `id`", i)
	}
	if e.Op == 0 {
		return e, st.entryErr(i, true, depth, &fieldError{msg: "no operation: expected one of `upsert`, `delete`, `append`"})
	}
	return e, nil
}

func (st *state) opAllowed(op domain.WriteOp) string {
	pkTable := st.c.IsPrimaryKeyTable()
	switch {
	case op == domain.OpAppend && pkTable:
		return "`append` is not allowed on a primary-key table (use `upsert`)"
	case op != domain.OpAppend && !pkTable:
		return opNames[op] + " is not allowed on a log table (use `append`)"
	}
	return ""
}

// entryID reads entries[i].id, which must be a non-empty string unique in the
// request.
func (st *state) entryID(i int) error {
	raw, err := st.dec.ReadValue()
	if err != nil {
		return st.entryErr(i, false, -1, st.syntaxErr(err))
	}
	if raw[0] != '"' || len(raw) == 2 {
		return invalid("entries[%d]: `id` must be a non-empty string", i)
	}
	id, err := st.unquote(raw)
	if err != nil {
		return st.entryErr(i, false, -1, st.syntaxErr(err))
	}
	return st.addID(i, id)
}

// addID records id (unquoted, non-empty) as the id of entries[i], checking
// that it is unique in the request.
func (st *state) addID(i int, id []byte) error {
	start := len(st.idBuf)
	st.idBuf = append(st.idBuf, id...)
	id = st.idBuf[start:]
	h := maphash.Bytes(hashSeed, id)
	if prev := st.ids.insert(i, h, func(j int) bool { return bytes.Equal(st.idOf(j), id) }); prev >= 0 {
		return invalid("entry `%s`: duplicate id (also entries[%d])", id, prev)
	}
	st.idEnds = append(st.idEnds, len(st.idBuf))
	return nil
}

func (st *state) idOf(j int) []byte {
	start := 0
	if j > 0 {
		start = st.idEnds[j-1]
	}
	return st.idBuf[start:st.idEnds[j]]
}

// entryErr names a failure inside entries[i]: by id when it is known (or
// can still be found further in the entry), else by index.
func (st *state) entryErr(i int, haveID bool, depth int, err error) error {
	fe, ok := err.(*fieldError)
	if !ok {
		return err
	}
	if haveID {
		return fieldInvalid(fe, "entry `%s`: %s", st.idOf(i), fe.Error())
	}
	if !fe.syntax && depth > 0 {
		if id := st.recoverID(depth); id != nil {
			st.recovered = id
			return fieldInvalid(fe, "entry `%s`: %s", id, fe.Error())
		}
	}
	return fieldInvalid(fe, "entries[%d]: %s", i, fe.Error())
}

// recoverID skips the rest of the entry object at stack depth depth after a
// semantic error, looking for its id. It returns nil when there is none or
// the rest of the entry is not well-formed.
func (st *state) recoverID(depth int) []byte {
	for st.dec.StackDepth() > depth {
		switch st.dec.PeekKind() {
		case '}', ']':
			if _, err := st.dec.ReadToken(); err != nil {
				return nil
			}
		case 0:
			return nil
		default:
			if err := st.dec.SkipValue(); err != nil {
				return nil
			}
		}
	}
	if st.dec.StackDepth() < depth {
		return nil
	}
	if _, n := st.dec.StackIndex(depth); n%2 == 1 {
		if err := st.dec.SkipValue(); err != nil { // a member's value is pending
			return nil
		}
	}
	for st.dec.PeekKind() == '"' {
		name, err := st.readName()
		if err != nil {
			return nil
		}
		if string(name) != "id" {
			if err := st.dec.SkipValue(); err != nil {
				return nil
			}
			continue
		}
		raw, err := st.dec.ReadValue()
		if err != nil || raw[0] != '"' || len(raw) == 2 {
			return nil
		}
		id, err := st.unquote(raw)
		if err != nil {
			return nil
		}
		return bytes.Clone(id)
	}
	return nil
}

// writeRow decodes the object of an upsert, delete or append into row.
func (st *state) writeRow(op domain.WriteOp, row []domain.Datum) error {
	if err := st.beginObject(opNames[op]); err != nil {
		return err
	}
	c := st.c
	clear(st.present)
	depth := st.dec.StackDepth()
	hint := 0
	for {
		if st.dec.PeekKind() == '}' {
			break
		}
		ci, name, err := st.readColumn(hint)
		if err != nil {
			return st.syntaxErr(err)
		}
		if ci < 0 {
			return st.rowFailure(depth, st.noSuchColumn(name), name)
		}
		col := &c.cols[ci]
		if st.present[ci>>6]&(1<<(ci&63)) != 0 {
			return st.failAt(col.name, "duplicate key")
		}
		switch {
		case col.autoInc:
			return st.failAt(col.name, "auto-increment column: Fluss assigns its value")
		case op == domain.OpUpsert && st.partial != nil && !st.partial[ci]:
			return st.failAt(col.name, "not in partial_update_columns")
		}
		st.present[ci>>6] |= 1 << (ci & 63)
		st.path = append(st.path, seg{kind: segName, a: int32(ci)})
		if err := st.decodeValue(&row[ci], col.t, 1); err != nil {
			return st.rowFailure(depth, err, nil)
		}
		if col.pk && row[ci].Null {
			return st.rowFailure(depth, st.fail("a primary-key column must not be null"), nil)
		}
		if op == domain.OpDelete && !col.pk {
			// As the official decoder (a sparse row over the primary key):
			// other columns of a delete are type-checked, then not used.
			row[ci] = domain.Datum{Null: true}
		}
		st.path = st.path[:0]
		hint = ci + 1
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return st.syntaxErr(err)
	}
	return st.fillMissing(op, row)
}

// rowFailure returns the error to report for a row object (at stack depth
// depth) in which err was found, with the official decoder's precedence
// (decoder.rs decode_row_map): the rest of the object is scanned, and a
// repeated name anywhere in it wins, then an unknown column, then err. unknown
// is the name of the unknown column err is about (nil when err is a value
// error). Syntax errors are returned as they are; so is err when the rest of
// the object is not well-formed (malformedFirst reports that). On the error
// path only; linear in the rest of the object.
func (st *state) rowFailure(depth int, err error, unknown []byte) error {
	if fe, ok := err.(*fieldError); !ok || fe.syntax {
		return err
	}
	st.path = st.path[:0]
	// Unwind to the row object: past the rest of a member value left
	// half-read by the error, or the value of the unknown column.
	for st.dec.StackDepth() > depth {
		if k := st.dec.PeekKind(); k == '}' || k == ']' {
			if _, e := st.dec.ReadToken(); e != nil {
				return err
			}
		} else if st.dec.SkipValue() != nil {
			return err
		}
	}
	if st.dec.StackDepth() < depth {
		return err
	}
	if _, n := st.dec.StackIndex(depth); n%2 == 1 && st.dec.SkipValue() != nil {
		return err
	}
	var others map[string]bool // unknown names seen
	if unknown != nil {
		others = map[string]bool{string(unknown): true}
	}
	var firstUnknown error
	if unknown != nil {
		firstUnknown = err
	}
	for st.dec.PeekKind() == '"' {
		ci, name, e := st.readColumn(-1)
		if e != nil || st.dec.SkipValue() != nil {
			return err
		}
		if ci >= 0 {
			if st.present[ci>>6]&(1<<(ci&63)) != 0 {
				return st.failAt(st.c.cols[ci].name, "duplicate key")
			}
			st.present[ci>>6] |= 1 << (ci & 63)
			continue
		}
		if others[string(name)] {
			return st.failAt(string(name), "duplicate key")
		}
		if others == nil {
			others = map[string]bool{}
		}
		others[string(name)] = true
		if firstUnknown == nil {
			firstUnknown = st.noSuchColumn(name)
		}
	}
	if firstUnknown != nil {
		return firstUnknown
	}
	return err
}

// fillMissing sets the columns absent from the row object to null, checking
// that this is allowed.
func (st *state) fillMissing(op domain.WriteOp, row []domain.Datum) error {
	c := st.c
	for w, seen := range st.present {
		missing := ^seen
		if n := len(c.cols) - w*64; n < 64 {
			missing &= 1<<n - 1
		}
		for ; missing != 0; missing &= missing - 1 {
			if err := st.fillMissingColumn(op, row, w*64+bits.TrailingZeros64(missing)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fillMissingColumn sets the absent column ci to null, checking that this
// is allowed.
func (st *state) fillMissingColumn(op domain.WriteOp, row []domain.Datum, ci int) error {
	col := &st.c.cols[ci]
	row[ci].Null = true
	switch {
	case col.pk:
		return st.failAt(col.name, "missing primary-key column")
	case op == domain.OpDelete || col.autoInc:
	case op == domain.OpUpsert && st.partial != nil && !st.partial[ci]:
	case !col.t.nullable:
		return st.failAt(col.name, "missing value for a NOT NULL column")
	}
	return nil
}
