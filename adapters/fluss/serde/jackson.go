package serde

// This file holds the writing helpers that make our bytes equal to the Java
// client's: Jackson's string escaping and java.util.HashMap iteration order
// of property maps.

import (
	"sort"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

const hexDigits = "0123456789ABCDEF"

// appendJSONString appends s as a JSON string escaped the way Jackson's
// default generator escapes it: `"` and `\`, the short forms \b \t \n \f \r,
// \u00XX (upper-case hex) for other control characters, characters beyond
// U+FFFF as two \u-escaped UTF-16 surrogates, and everything else verbatim
// (no HTML escaping, no escaping of other non-ASCII). Invalid UTF-8 is written
// as U+FFFD, as a Java string decoded from those bytes would hold.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\b':
				b = append(b, '\\', 'b')
			case '\t':
				b = append(b, '\\', 't')
			case '\n':
				b = append(b, '\\', 'n')
			case '\f':
				b = append(b, '\\', 'f')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				if c < 0x20 {
					b = appendUnicodeEscape(b, rune(c))
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = utf8.AppendRune(b, utf8.RuneError)
		case r >= 0x10000:
			// Jackson 2.15 (shaded in Fluss 0.9.1) writes a supplementary
			// character as its two UTF-16 surrogates, each \u-escaped.
			hi, lo := utf16.EncodeRune(r)
			b = appendUnicodeEscape(b, hi)
			b = appendUnicodeEscape(b, lo)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// appendUnicodeEscape appends \uXXXX for a UTF-16 code unit, with Jackson's
// upper-case hex digits.
func appendUnicodeEscape(b []byte, u rune) []byte {
	return append(b, '\\', 'u', hexDigits[u>>12&0xF], hexDigits[u>>8&0xF], hexDigits[u>>4&0xF], hexDigits[u&0xF])
}

func appendIntField(b []byte, key string, n int64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, n, 10)
}

func appendStringArray(b []byte, items []string) []byte {
	b = append(b, '[')
	for i, s := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

func appendStringMap(b []byte, m map[string]string) []byte {
	b = append(b, '{')
	for i, k := range javaHashMapOrder(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

// java.util.HashMap constants (OpenJDK java/util/HashMap.java).
const (
	javaHashMapInitialCapacity = 16
	javaHashMapTreeifyAt       = 9  // a bin holding this many nodes is treeified ...
	javaHashMapMinTreeCapacity = 64 // ... or, below this capacity, the table grows instead
)

// javaHashMapOrder returns the keys of m in the iteration order of a
// java.util.HashMap created with `new HashMap<>()` into which the keys were
// put one at a time in ascending order. Fluss serialises properties by
// iterating such maps, so this reproduces the Java client's bytes whenever it
// filled the map key by key (TableDescriptor.Builder#property). A HashMap
// iterates bins in index order (hash spread, masked by the capacity) and each
// bin in insertion order; only the final capacity matters, since resizing
// preserves relative order. The capacity starts at 16, doubles when the size
// exceeds 3/4 of it, and also doubles when a bin reaches 9 nodes while the
// capacity is below 64. A bin of 9+ nodes in a table of 64+ bins becomes a
// tree whose iteration order is not reproduced; that needs nine colliding
// keys and does not happen with realistic property sets.
//
// Java's order is not fully determined by the keys: maps presized by putAll
// (whose sizing changed in JDK 19) or filled in another order may iterate
// differently. Fluss reads these objects by key, so order never changes
// meaning.
func javaHashMapOrder(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	hashes := make([]uint32, len(keys))
	capacity := uint32(javaHashMapInitialCapacity)
	bins := make(map[uint32]int)
	inserted := 0
	grow := func() {
		capacity *= 2
		clear(bins)
		for _, h := range hashes[:inserted] {
			bins[h&(capacity-1)]++
		}
	}
	for i, k := range keys {
		h := javaSpreadHash(k)
		hashes[i] = h
		inserted = i + 1
		idx := h & (capacity - 1)
		bins[idx]++
		if bins[idx] >= javaHashMapTreeifyAt && capacity < javaHashMapMinTreeCapacity {
			grow()
		}
		if uint32(inserted) > capacity/4*3 {
			grow()
		}
	}
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return hashes[order[a]]&(capacity-1) < hashes[order[b]]&(capacity-1)
	})
	out := make([]string, len(keys))
	for i, j := range order {
		out[i] = keys[j]
	}
	return out
}

// javaSpreadHash is java.lang.String#hashCode (over UTF-16 code units) mixed
// by HashMap#hash (h ^ h>>>16).
func javaSpreadHash(s string) uint32 {
	var h uint32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + uint32(hi)
			h = 31*h + uint32(lo)
			continue
		}
		h = 31*h + uint32(r)
	}
	return h ^ (h >> 16)
}
