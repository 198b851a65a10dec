package rowjson

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// ReadOptions are the gateway's extension fields of lookup and prefix-lookup
// bodies (official clients never send them):
//
//	"columns": ["a", "b"]   the columns to return, in this order (default: all)
//	"page_token": "…"       prefix lookups only: continue a truncated answer
//
// Columns holds the column positions, nil when the body has no `columns`.
type ReadOptions struct {
	Columns   []int
	PageToken string
	seen      uint8
}

const (
	seenColumns = 1 << iota
	seenPageToken
)

// DecodeKeysWith is DecodeKeys also accepting the ReadOptions fields.
func (c *Codec) DecodeKeysWith(body []byte, lim Limits) ([][]domain.Datum, ReadOptions, error) {
	var ro ReadOptions
	keys, err := c.decodeKeys(body, lim, &ro)
	if err != nil {
		return nil, ReadOptions{}, malformedFirst(body, err)
	}
	return keys, ro, nil
}

// DecodePrefixesWith is DecodePrefixes also accepting the ReadOptions fields.
func (c *Codec) DecodePrefixesWith(body []byte, lim Limits) ([]string, [][]domain.Datum, ReadOptions, error) {
	var ro ReadOptions
	cols, prefixes, err := c.decodePrefixes(body, lim, &ro)
	if err != nil {
		return nil, nil, ReadOptions{}, malformedFirst(body, err)
	}
	return cols, prefixes, ro, nil
}

// readOption reads the value of the top-level field name into ro when it
// is a ReadOptions field (page_token only when paged); handled is false for
// other names, which the caller reports as unknown.
func (st *state) readOption(name []byte, ro *ReadOptions, paged bool) (handled bool, err error) {
	switch {
	case string(name) == "columns":
		if ro.seen&seenColumns != 0 {
			return true, topErr(st.dupKey(name))
		}
		ro.seen |= seenColumns
		return true, st.readColumns(ro)
	case string(name) == "page_token" && paged:
		if ro.seen&seenPageToken != 0 {
			return true, topErr(st.dupKey(name))
		}
		ro.seen |= seenPageToken
		raw, err := st.dec.ReadValue()
		if err != nil {
			return true, topErr(st.syntaxErr(err))
		}
		if raw[0] == 'n' {
			return true, nil
		}
		if raw[0] != '"' {
			return true, invalid("page_token: must be a string, got %s", kindName(jsontext.Value(raw).Kind()))
		}
		tok, err := st.unquote(raw)
		if err != nil {
			return true, topErr(st.syntaxErr(err))
		}
		ro.PageToken = string(tok)
		return true, nil
	}
	return false, nil
}

// readColumns decodes `columns`: a non-empty array of distinct existing
// column names.
func (st *state) readColumns(ro *ReadOptions) error {
	c := st.c
	if k := st.dec.PeekKind(); k != '[' {
		return invalid("columns: must be a JSON array of column names, got %s", kindName(k))
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return topErr(st.syntaxErr(err))
	}
	seen := make([]bool, len(c.cols))
	ro.Columns = []int{}
	for i := 0; st.dec.PeekKind() != ']'; i++ {
		raw, err := st.dec.ReadValue()
		if err != nil {
			return topErr(st.syntaxErr(err))
		}
		if raw[0] != '"' {
			return invalid("columns[%d]: must be a column name string, got %s", i, kindName(jsontext.Value(raw).Kind()))
		}
		name, err := st.unquote(raw)
		if err != nil {
			return topErr(st.syntaxErr(err))
		}
		ci := c.columnIndex(name, -1)
		switch {
		case ci < 0:
			return domain.UnknownColumn("columns[%d]: no such column `%s`", i, cutName(string(name)))
		case seen[ci]:
			return invalid("columns[%d]: column `%s` listed twice", i, cutName(string(name)))
		}
		seen[ci] = true
		ro.Columns = append(ro.Columns, ci)
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return topErr(st.syntaxErr(err))
	}
	if len(ro.Columns) == 0 {
		return invalid("columns: must name at least one column")
	}
	return nil
}
