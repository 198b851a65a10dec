package rowjson

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// DecodeKeys decodes a lookup body {"keys": [{pk col: value, …}, …]} into
// one key per element, each holding one Datum per primary-key column in
// primary-key order. Every key names exactly the primary-key columns, none
// null. Errors name the key and column: "keys[3]: column `id`: …".
func (c *Codec) DecodeKeys(body []byte, lim Limits) ([][]domain.Datum, error) {
	keys, err := c.decodeKeys(body, lim, nil)
	if err != nil {
		return nil, malformedFirst(body, err)
	}
	return keys, nil
}

func (c *Codec) decodeKeys(body []byte, lim Limits, ro *ReadOptions) ([][]domain.Datum, error) {
	if !c.IsPrimaryKeyTable() {
		return nil, invalid("lookups need a primary-key table")
	}
	st := getState(c, nil, body, lim)
	defer putState(st)
	if err := st.beginObject("the request body"); err != nil {
		return nil, topErr(err)
	}
	var keys [][]domain.Datum
	saw := false
	for st.dec.PeekKind() != '}' {
		name, err := st.readName()
		if err != nil {
			return nil, topErr(st.syntaxErr(err))
		}
		if string(name) != "keys" {
			if ro != nil {
				if ok, err := st.readOption(name, ro, false); ok {
					if err != nil {
						return nil, err
					}
					continue
				}
			}
			return nil, invalid("unknown field `%s` in the request body (expected `keys`)", cutName(string(name)))
		}
		if saw {
			return nil, topErr(st.dupKey(name))
		}
		saw = true
		if keys, err = st.keyList("keys", c.pk, c.pkPos(), "primary-key"); err != nil {
			return nil, err
		}
	}
	if err := st.endTopLevel(); err != nil {
		return nil, err
	}
	if !saw {
		return nil, invalid("missing `keys`")
	}
	return keys, nil
}

// pkPos maps column positions to primary-key positions (-1 for others).
func (c *Codec) pkPos() []int {
	pos := make([]int, len(c.cols))
	for i := range pos {
		pos[i] = -1
	}
	for k, ci := range c.pk {
		pos[ci] = k
	}
	return pos
}

// DecodePrefixes decodes a prefix-lookup body
//
//	{"prefix_columns": ["a", "b"], "prefixes": [{"a": …, "b": …}, …]}
//
// into the prefix column names and one prefix per element, each holding one
// Datum per prefix column in prefix_columns order. Prefix columns must be
// distinct existing columns; whether they form a valid lookup prefix (the
// bucket key) is for the caller to check. Errors name the prefix and column:
// "prefixes[2]: column `a`: …".
func (c *Codec) DecodePrefixes(body []byte, lim Limits) ([]string, [][]domain.Datum, error) {
	cols, prefixes, err := c.decodePrefixes(body, lim, nil)
	if err != nil {
		return nil, nil, malformedFirst(body, err)
	}
	return cols, prefixes, nil
}

func (c *Codec) decodePrefixes(body []byte, lim Limits, ro *ReadOptions) ([]string, [][]domain.Datum, error) {
	if !c.IsPrimaryKeyTable() {
		return nil, nil, invalid("prefix lookups need a primary-key table")
	}
	st := getState(c, nil, body, lim)
	defer putState(st)
	if err := st.beginObject("the request body"); err != nil {
		return nil, nil, topErr(err)
	}
	var (
		names    []string
		sel      []int
		prefixes [][]domain.Datum
		pending  []byte // prefixes seen before prefix_columns
		saw      bool
	)
	for st.dec.PeekKind() != '}' {
		name, err := st.readName()
		if err != nil {
			return nil, nil, topErr(st.syntaxErr(err))
		}
		switch string(name) {
		case "prefix_columns":
			if sel != nil {
				return nil, nil, topErr(st.dupKey(name))
			}
			if names, sel, err = st.prefixColumns(); err != nil {
				return nil, nil, err
			}
		case "prefixes":
			if saw {
				return nil, nil, topErr(st.dupKey(name))
			}
			saw = true
			if sel == nil {
				raw, err := st.dec.ReadValue()
				if err != nil {
					return nil, nil, topErr(st.syntaxErr(err))
				}
				pending = bytes.Clone(raw)
				continue
			}
			if prefixes, err = st.keyList("prefixes", sel, selPos(len(c.cols), sel), "prefix"); err != nil {
				return nil, nil, err
			}
		default:
			if ro != nil {
				if ok, err := st.readOption(name, ro, true); ok {
					if err != nil {
						return nil, nil, err
					}
					continue
				}
			}
			return nil, nil, invalid("unknown field `%s` in the request body (expected `prefix_columns` and `prefixes`)", cutName(string(name)))
		}
	}
	if err := st.endTopLevel(); err != nil {
		return nil, nil, err
	}
	if sel == nil {
		return nil, nil, invalid("missing `prefix_columns`")
	}
	if !saw {
		return nil, nil, invalid("missing `prefixes`")
	}
	if pending != nil {
		st.rd = *bytes.NewBuffer(pending)
		st.dec.Reset(&st.rd, decodeOptions...)
		var err error
		if prefixes, err = st.keyList("prefixes", sel, selPos(len(c.cols), sel), "prefix"); err != nil {
			return nil, nil, err
		}
	}
	return names, prefixes, nil
}

func selPos(width int, sel []int) []int {
	pos := make([]int, width)
	for i := range pos {
		pos[i] = -1
	}
	for k, ci := range sel {
		pos[ci] = k
	}
	return pos
}

// prefixColumns decodes prefix_columns: a non-empty array of distinct
// column names.
func (st *state) prefixColumns() ([]string, []int, error) {
	c := st.c
	if k := st.dec.PeekKind(); k != '[' {
		return nil, nil, invalid("prefix_columns: must be a JSON array of column names, got %s", kindName(k))
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return nil, nil, topErr(st.syntaxErr(err))
	}
	var names []string
	var sel []int
	for i := 0; st.dec.PeekKind() != ']'; i++ {
		raw, err := st.dec.ReadValue()
		if err != nil {
			return nil, nil, topErr(st.syntaxErr(err))
		}
		if raw[0] != '"' {
			return nil, nil, invalid("prefix_columns[%d]: must be a column name string, got %s", i, kindName(jsontext.Value(raw).Kind()))
		}
		name, err := st.unquote(raw)
		if err != nil {
			return nil, nil, topErr(st.syntaxErr(err))
		}
		ci := c.columnIndex(name, -1)
		if ci < 0 {
			return nil, nil, domain.UnknownColumn("prefix_columns[%d]: no such column `%s`", i, cutName(string(name)))
		}
		for _, prev := range sel {
			if prev == ci {
				return nil, nil, invalid("prefix_columns[%d]: column `%s` listed twice", i, cutName(string(name)))
			}
		}
		sel = append(sel, ci)
		names = append(names, c.cols[ci].name)
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return nil, nil, topErr(st.syntaxErr(err))
	}
	if len(sel) == 0 {
		return nil, nil, invalid("prefix_columns: must name at least one column")
	}
	return names, sel, nil
}

// keyList decodes an array of key objects (field is "keys" or "prefixes")
// over the columns sel; pos maps column positions to indexes in sel.
func (st *state) keyList(field string, sel, pos []int, role string) ([][]domain.Datum, error) {
	if k := st.dec.PeekKind(); k != '[' {
		if k == 0 {
			_, err := st.dec.ReadToken()
			return nil, topErr(st.syntaxErr(err))
		}
		return nil, invalid("%s: must be a JSON array, got %s", field, kindName(k))
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return nil, topErr(st.syntaxErr(err))
	}
	// The keys' Datums go into one flat array, grown as keys arrive and cut
	// into keys at the end: a request of 16 one-column prefixes allocates
	// 16 Datums rather than the slab's first chunk (256 Datums, 20 KiB,
	// zeroed), which was the largest allocation of a prefix lookup.
	w := len(sel)
	flat := make([]domain.Datum, 0, w*16)
	n := 0
	for ; st.dec.PeekKind() != ']'; n++ {
		if n >= st.lim.MaxEntries {
			return nil, &domain.Error{Kind: domain.KindLimitExceeded,
				Message: field + ": more than " + strconv.Itoa(st.lim.MaxEntries) + " elements"}
		}
		flat = slices.Grow(flat, w)[:len(flat)+w]
		if err := st.keyObject(flat[len(flat)-w:], sel, pos, role); err != nil {
			if fe, ok := err.(*fieldError); ok {
				return nil, fieldInvalid(fe, "%s[%d]: %s", field, n, fe.Error())
			}
			return nil, err
		}
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return nil, topErr(st.syntaxErr(err))
	}
	if n == 0 {
		return nil, invalid("%s: must contain at least one element", field)
	}
	out := make([][]domain.Datum, n)
	for i := range out {
		out[i] = flat[i*w : (i+1)*w : (i+1)*w]
	}
	return out, nil
}

// keyObject decodes one key object naming exactly the columns sel.
func (st *state) keyObject(key []domain.Datum, sel, pos []int, role string) error {
	what := "a key"
	if role == "prefix" {
		what = "a prefix"
	}
	if err := st.beginObject(what); err != nil {
		return err
	}
	c := st.c
	clear(st.present)
	for st.dec.PeekKind() != '}' {
		name, err := st.readName()
		if err != nil {
			return st.syntaxErr(err)
		}
		ci := c.columnIndex(name, -1)
		if ci < 0 {
			return st.noSuchColumn(name)
		}
		k := pos[ci]
		if k < 0 {
			return st.failAt(c.cols[ci].name, "not a %s column", role)
		}
		if st.present[ci>>6]&(1<<(ci&63)) != 0 {
			return st.failAt(c.cols[ci].name, "duplicate key")
		}
		st.present[ci>>6] |= 1 << (ci & 63)
		st.path = append(st.path, seg{kind: segName, a: int32(ci)})
		if err := st.decodeValue(&key[k], c.cols[ci].t, 1); err != nil {
			return err
		}
		if key[k].Null {
			return st.fail("a %s column must not be null", role)
		}
		st.path = st.path[:0]
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return st.syntaxErr(err)
	}
	for _, ci := range sel {
		if st.present[ci>>6]&(1<<(ci&63)) == 0 {
			return st.failAt(c.cols[ci].name, "missing %s column", role)
		}
	}
	return nil
}
