package rowjson

import (
	"bytes"
	"hash/maphash"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// decodeValue reads the next JSON value into d (which must be zero) as a
// value of type t at nesting depth depth (1 for a top-level column).
func (st *state) decodeValue(d *domain.Datum, t *typ, depth int) error {
	if t.kind < kArray {
		raw, err := st.dec.ReadValue()
		if err != nil {
			return st.syntaxErr(err)
		}
		if raw[0] == 'n' {
			return st.null(d, t)
		}
		return st.scalar(d, t, raw)
	}
	switch k := st.dec.PeekKind(); k {
	case 'n':
		if _, err := st.dec.ReadToken(); err != nil {
			return st.syntaxErr(err)
		}
		return st.null(d, t)
	case 0:
		_, err := st.dec.ReadToken()
		return st.syntaxErr(err)
	}
	if depth > st.lim.MaxDepth {
		return st.fail("nested deeper than %d levels", st.lim.MaxDepth)
	}
	switch t.kind {
	case kArray:
		return st.array(d, t, depth)
	case kMap:
		return st.mapValue(d, t, depth)
	default:
		return st.row(d, t, depth)
	}
}

func (st *state) null(d *domain.Datum, t *typ) error {
	if !t.nullable {
		return st.fail("must not be null (%s NOT NULL)", t.name)
	}
	d.Null = true
	return nil
}

// nestedMismatch reports a value of the wrong JSON kind for a nested type.
func (st *state) nestedMismatch(t *typ, want string) error {
	return st.fail("expected %s for %s, got %s", want, t.name, kindName(st.dec.PeekKind()))
}

// finishElems moves the elements pushed on the scratch stack since base to
// the slab.
func (st *state) finishElems(base int) []domain.Datum {
	n := len(st.scratch) - base
	elems := st.slab.alloc(n)
	copy(elems, st.scratch[base:])
	clear(st.scratch[base:])
	st.scratch = st.scratch[:base]
	return elems
}

func (st *state) array(d *domain.Datum, t *typ, depth int) error {
	if st.dec.PeekKind() != '[' {
		return st.nestedMismatch(t, "a JSON array")
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return st.syntaxErr(err)
	}
	base := len(st.scratch)
	st.path = append(st.path, seg{kind: segIndex})
	top := len(st.path) - 1
	for i := 0; ; i++ {
		if st.dec.PeekKind() == ']' {
			break
		}
		st.path[top].a = int32(i)
		var e domain.Datum
		if err := st.decodeValue(&e, t.elem, depth+1); err != nil {
			return err
		}
		st.scratch = append(st.scratch, e)
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return st.syntaxErr(err)
	}
	st.path = st.path[:top]
	d.Elems = st.finishElems(base)
	return nil
}

// mapValue decodes a MAP: a JSON array of {"key": k, "value": v} objects or,
// when the key type is STRING, a JSON object. Keys are never null and
// never repeated.
func (st *state) mapValue(d *domain.Datum, t *typ, depth int) error {
	base := len(st.scratch)
	switch st.dec.PeekKind() {
	case '{':
		if !t.key.isStringKey() {
			return st.nestedMismatch(t, `a JSON array of {"key": …, "value": …} objects`)
		}
		if _, err := st.dec.ReadToken(); err != nil {
			return st.syntaxErr(err)
		}
		for {
			if st.dec.PeekKind() == '}' {
				break
			}
			name, err := st.readName()
			if err != nil {
				return st.syntaxErr(err)
			}
			// Object names are unique (the tokenizer checks) and valid UTF-8.
			kb := st.arena.copy(name)
			kseg := seg{kind: segKey, a: int32(len(st.keys)), b: int32(len(st.keys) + len(kb))}
			st.path = append(st.path, kseg)
			st.keys = append(st.keys, kb...)
			var v domain.Datum
			if err := st.decodeValue(&v, t.val, depth+1); err != nil {
				return err
			}
			st.path = st.path[:len(st.path)-1]
			st.keys = st.keys[:kseg.a]
			st.scratch = append(st.scratch, domain.Datum{Bytes: kb}, v)
		}
		if _, err := st.dec.ReadToken(); err != nil {
			return st.syntaxErr(err)
		}
		if j, _ := duplicateKey(st, st.scratch[base:]); j >= 0 {
			k := st.scratch[base+2*j].Bytes
			st.path = append(st.path, seg{kind: segKey, a: int32(len(st.keys)), b: int32(len(st.keys) + len(k))})
			st.keys = append(st.keys, k...)
			return st.fail("duplicate key")
		}
	case '[':
		if _, err := st.dec.ReadToken(); err != nil {
			return st.syntaxErr(err)
		}
		st.path = append(st.path, seg{kind: segIndex})
		top := len(st.path) - 1
		for i := 0; ; i++ {
			if st.dec.PeekKind() == ']' {
				break
			}
			st.path[top].a = int32(i)
			k, v, err := st.mapEntry(t, depth)
			if err != nil {
				return err
			}
			st.scratch = append(st.scratch, k, v)
		}
		if _, err := st.dec.ReadToken(); err != nil {
			return st.syntaxErr(err)
		}
		st.path = st.path[:top]
		if j, i := duplicateKey(st, st.scratch[base:]); j >= 0 {
			st.path = append(st.path, seg{kind: segIndex, a: int32(j)}, seg{kind: segMapKey})
			return st.fail("duplicate map key (same as element [%d])", i)
		}
	default:
		if t.key.isStringKey() {
			return st.nestedMismatch(t, `a JSON object or an array of {"key": …, "value": …} objects`)
		}
		return st.nestedMismatch(t, `a JSON array of {"key": …, "value": …} objects`)
	}
	d.Elems = st.finishElems(base)
	return nil
}

func (st *state) charLength(t *typ, b []byte) error {
	if n := utf8.RuneCount(b); n > t.length {
		return st.fail("%s value has %d characters, more than %d", t.name, n, t.length)
	}
	return nil
}

// mapEntry decodes one {"key": k, "value": v} object.
func (st *state) mapEntry(t *typ, depth int) (k, v domain.Datum, err error) {
	if err := st.beginObject(`a MAP element`); err != nil {
		return k, v, err
	}
	var haveKey, haveValue bool
	for {
		if st.dec.PeekKind() == '}' {
			break
		}
		name, err := st.readName()
		if err != nil {
			return k, v, st.syntaxErr(err)
		}
		switch string(name) {
		case "key":
			if haveKey {
				return k, v, st.dupKey(name)
			}
			haveKey = true
			st.path = append(st.path, seg{kind: segMapKey})
			if st.dec.PeekKind() == 'n' {
				return k, v, st.fail("a map key must not be null")
			}
			if err := st.decodeValue(&k, t.key, depth+1); err != nil {
				return k, v, err
			}
		case "value":
			if haveValue {
				return k, v, st.dupKey(name)
			}
			haveValue = true
			st.path = append(st.path, seg{kind: segMapValue})
			if err := st.decodeValue(&v, t.val, depth+1); err != nil {
				return k, v, err
			}
		default:
			return k, v, st.failAt(string(name), `unknown field: a MAP element has only "key" and "value"`)
		}
		st.path = st.path[:len(st.path)-1]
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return k, v, st.syntaxErr(err)
	}
	if !haveKey {
		return k, v, st.failAt("key", "missing map key")
	}
	if !haveValue {
		return k, v, st.failAt("value", "missing map value")
	}
	return k, v, nil
}

// row decodes a ROW as a JSON object of its fields; missing fields are null.
func (st *state) row(d *domain.Datum, t *typ, depth int) error {
	if st.dec.PeekKind() != '{' {
		return st.nestedMismatch(t, "a JSON object")
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return st.syntaxErr(err)
	}
	fields := st.slab.alloc(len(t.fields))
	var seenSmall uint64
	var seenBig []bool
	if len(t.fields) > 64 {
		seenBig = make([]bool, len(t.fields))
	}
	hint := 0
	for {
		if st.dec.PeekKind() == '}' {
			break
		}
		i, name, err := st.readField(t, hint)
		if err != nil {
			return st.syntaxErr(err)
		}
		if i < 0 {
			return st.failAt(string(name), "no such field in %s", t.name)
		}
		if seenBig != nil {
			if seenBig[i] {
				return st.failAt(t.fields[i].name, "duplicate key")
			}
			seenBig[i] = true
		} else {
			if seenSmall&(1<<i) != 0 {
				return st.failAt(t.fields[i].name, "duplicate key")
			}
			seenSmall |= 1 << i
		}
		f := &t.fields[i]
		st.path = append(st.path, seg{kind: segName, a: f.nameID})
		if err := st.decodeValue(&fields[i], f.t, depth+1); err != nil {
			return err
		}
		st.path = st.path[:len(st.path)-1]
		hint = i + 1
	}
	if _, err := st.dec.ReadToken(); err != nil {
		return st.syntaxErr(err)
	}
	for i := range t.fields {
		seen := seenSmall&(1<<i) != 0
		if seenBig != nil {
			seen = seenBig[i]
		}
		if !seen {
			if !t.fields[i].t.nullable {
				return st.failAt(t.fields[i].name, "missing value for a NOT NULL field")
			}
			fields[i].Null = true
		}
	}
	d.Elems = fields
	return nil
}

// duplicateKey reports the first map element whose key equals an earlier
// one, as (later, earlier) indexes, or (-1, -1). kv alternates keys and values.
func duplicateKey(st *state, kv []domain.Datum) (int, int) {
	n := len(kv) / 2
	if n <= 8 {
		for j := 1; j < n; j++ {
			for i := 0; i < j; i++ {
				if datumEqual(&kv[2*j], &kv[2*i]) {
					return j, i
				}
			}
		}
		return -1, -1
	}
	// Sort (hash, index) pairs; equal keys have equal hashes.
	st.hashes = st.hashes[:0]
	for i := 0; i < n; i++ {
		st.hashes = append(st.hashes, datumHash(&kv[2*i])&^0xffffffff|uint64(i))
	}
	slices.Sort(st.hashes)
	bestJ, bestI := -1, -1
	for a := 0; a < len(st.hashes); a++ {
		for b := a + 1; b < len(st.hashes) && st.hashes[b]>>32 == st.hashes[a]>>32; b++ {
			i, j := int(uint32(st.hashes[a])), int(uint32(st.hashes[b]))
			if i > j {
				i, j = j, i
			}
			if datumEqual(&kv[2*i], &kv[2*j]) && (bestJ < 0 || j < bestJ) {
				bestJ, bestI = j, i
			}
		}
	}
	return bestJ, bestI
}

func datumHash(d *domain.Datum) uint64 {
	if d.Null {
		return 0x9e3779b97f4a7c15
	}
	h := uint64(d.I64)*0xff51afd7ed558ccd ^ math.Float64bits(d.F64)*0xc4ceb9fe1a85ec53 ^ uint64(d.Nanos)<<17
	if len(d.Bytes) > 0 {
		h ^= maphash.Bytes(hashSeed, d.Bytes)
	}
	for i := range d.Elems {
		h = (h^datumHash(&d.Elems[i]))*0x100000001b3 + uint64(i)
	}
	return h
}

// datumEqual compares two Datums of the same type exactly (floats by bits).
func datumEqual(a, b *domain.Datum) bool {
	if a.Null || b.Null {
		return a.Null == b.Null
	}
	if a.I64 != b.I64 || a.Nanos != b.Nanos || math.Float64bits(a.F64) != math.Float64bits(b.F64) ||
		!bytes.Equal(a.Bytes, b.Bytes) || len(a.Elems) != len(b.Elems) {
		return false
	}
	for i := range a.Elems {
		if !datumEqual(&a.Elems[i], &b.Elems[i]) {
			return false
		}
	}
	return true
}
