// Package rowjson is the exact JSON value codec of the gateway's write and
// lookup contract: a schema-driven streaming decoder from request bodies to
// domain.Datum rows (Codec.DecodeWrite, DecodeKeys, DecodePrefixes) and an
// encoder from rows to JSON (AppendRow).
//
// The decoder reads tokens with jsontext (the encoding/json/v2 tokenizer) and
// turns each value straight into its Datum, the column's type known from the
// schema: no maps, no reflection, numbers taken from their text and never
// through float64. Rows come from one per-request Datum slab and their bytes
// from one per-request arena (see Buffer), so a request costs a handful of
// allocations whatever its size. Decoder state is pooled.
//
// Write bodies of the common shape ({"entries": [...]} with scalar column
// values) first go through a fast path (fast.go) that scans the bytes
// directly instead of through the jsontext state machine, with the same
// value conversions; on anything else, or on any error, it gives up without
// a trace and the general decoder decodes the body from the start. Results
// and error messages are the same either way (FuzzFastPath).
//
// # Errors
//
// A body that breaks a rule gives a KindInvalidArgument *domain.Error (too
// many entries: KindLimitExceeded) naming the entry and the column path:
//
//	entry `e2`: column `a.b[3]`: INTEGER value 1.5 must be an integer without fraction or exponent
//	entries[5]: missing `id`                       (no usable id: named by index)
//	keys[3]: column `id`: missing primary-key column
//
// Paths use .field for ROW fields, [i] for ARRAY elements and array-form MAP
// elements (then .key or .value), and ["k"] for object-form MAP keys. An error
// inside an entry whose id comes later in the entry object is still named by
// that id (the rest of the entry is scanned for it), unless the JSON itself is
// malformed. The first problem is reported; nothing is returned with it,
// with the official gateway's precedence: a body that is not valid JSON is
// always reported as such (it parses the whole body first), and within a row
// object a repeated name wins over an unknown column, which wins over a value
// error found earlier in the row.
//
// # Values
//
// The rules are the official gateway's decoder's (apache/fluss@a57d74c2
// fluss-gateway/src/protocol/rest/codec/decoder.rs, and temporal.rs as found
// in the fork wzx140/fluss@e6fab2fe; neither is on apache/fluss main at
// 545c553; their unit tests are restated in official_test.go):
//
//	TINYINT…BIGINT     JSON number or numeric string: [+-]digits[.digits]
//	                   [e[+-]digits] (+ only in strings, leading zeros fine)
//	                   whose exact value is a whole number in range: 1.0,
//	                   "1e2", 1.5e1 are 1, 100, 15; 1.5 and "1e-1" refused;
//	                   never through float64, never wrapped
//	DECIMAL(p,s)       number or numeric string [+-][digits][.digits]
//	                   [e[+-]digits] (".5", "5.", "+1.2E+1" fine; the
//	                   exponent must fit in int64); accepted when the value is
//	                   exactly an integer of at most p digits times 10^-s:
//	                   extra trailing zeros are fine, rounding never happens.
//	                   p <= 18: I64 unscaled; p > 18: Bytes, big-endian two's
//	                   complement (BigInteger#toByteArray), in 128 bits
//	FLOAT, DOUBLE      number or numeric string in Rust's f64 grammar
//	                   ("1.5", ".5", "1."), or exactly "NaN", "Infinity",
//	                   "-Infinity"; parsed to the nearest double (FLOAT then
//	                   narrowed); a finite spelling that overflows is refused,
//	                   underflow becomes 0
//	BOOLEAN            true or false only
//	CHAR(n), STRING    string (valid UTF-8, checked by the tokenizer); CHAR at
//	                   most n code points, not padded (Fluss stores CHAR
//	                   unpadded, as STRING)
//	BINARY(n), BYTES   standard base64 with padding (RFC 4648 §4), canonical
//	                   (no non-zero pad bits), no line breaks; BINARY exactly n
//	                   bytes
//	DATE               "[+-]YYYY-MM-DD", a year of at least 4 digits, within
//	                   Fluss's int range of days
//	TIME(p)            "HH:MM[:SS][.f…]", at most 9 fraction digits; Fluss
//	                   keeps TIME as milliseconds of the day, so digits beyond
//	                   the third must be 0 whatever p says
//	TIMESTAMP(p)       "DATE'T'TIME" (a space is refused), no zone, or epoch
//	                   milliseconds as a JSON number (integer spellings as
//	                   above, so 1.5e3 is 1500)
//	TIMESTAMP_LTZ(p)   the same with a zone, Z or ±hh:mm (at most ±18:00), or
//	                   epoch milliseconds
//	ARRAY              JSON array; element nullability enforced
//	MAP                array of {"key": k, "value": v} (both required, key
//	                   never null), or a JSON object when the key type is
//	                   STRING (not CHAR); repeated keys refused, compared
//	                   after decoding (7 and "7" clash); a MAP keyed by
//	                   ARRAY, MAP or ROW makes the table unwritable
//	                   (KindUnsupported), as the official decoder does
//	ROW                object of the row's fields; unknown fields refused,
//	                   missing nullable fields are null
//
// Fraction digits (TIME, TIMESTAMP) beyond the precision are accepted only
// when they are zeros; epoch milliseconds must not carry digits below the
// precision either (1500 for TIMESTAMP(0) is refused). Timestamps are I64
// epoch milliseconds (floored) plus Nanos within the millisecond. Nesting is
// bounded by Limits.MaxDepth.
//
// # Write rules
//
// Exactly one operation per entry; id required, non-empty, unique; unknown
// fields and duplicate keys refused everywhere; upsert and delete only on
// primary-key tables, append only on log tables; unknown columns refused;
// upserts and deletes carry every primary-key column, never null; other
// columns of a delete are type-checked and not used; omitted columns are null
// and must be nullable.
// partial_update_columns (primary-key tables only) must name distinct
// existing columns including every primary-key column, and, as the Fluss
// client requires (UpsertWriterImpl#sanityCheck), every column outside the
// primary key must be nullable; upserts then carry only those columns. It may
// come before or after entries. Auto-increment columns never carry values;
// on tables that have them a plain upsert writes every other column
// (PartialUpdateColumns is set accordingly, as Fluss requires target columns
// there).
package rowjson
