// Package bench10 generates the rows of the ten-column benchmark table of
// make bench-native (tests/bench-native/BenchNative.java: k BIGINT, name
// STRING, amount DECIMAL(18,2), qty INT, price DOUBLE, flag BOOLEAN, day
// DATE, ts TIMESTAMP_LTZ(3), note STRING, raw BYTES), so that the load
// generator and the Go benchmarks of the write path send the same JSON the
// Java client's rows are compared with. Test and tool code only.
package bench10

import (
	"encoding/base64"
	"strconv"
	"time"
)

// ColumnsJSON is the table's columns in the gateway's create-table body
// (Fluss's DataType JSON): a JSON array.
const ColumnsJSON = `[
 {"name":"k","data_type":{"type":"BIGINT"},"nullable":false},
 {"name":"name","data_type":{"type":"STRING"}},
 {"name":"amount","data_type":{"type":"DECIMAL","precision":18,"scale":2}},
 {"name":"qty","data_type":{"type":"INTEGER"}},
 {"name":"price","data_type":{"type":"DOUBLE"}},
 {"name":"flag","data_type":{"type":"BOOLEAN"}},
 {"name":"day","data_type":{"type":"DATE"}},
 {"name":"ts","data_type":{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","precision":3}},
 {"name":"note","data_type":{"type":"STRING"}},
 {"name":"raw","data_type":{"type":"BYTES"}}]`

// FloorMod is a mod m in [0, m) for m > 0 (Java's Math.floorMod, which
// BenchNative.java uses for the same columns).
func FloorMod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// AppendRow appends the JSON object of row i (the values BenchNative.java
// gives row i): {"k":i,"name":"user-i","amount":"…","qty":…,"price":…,
// "flag":…,"day":"YYYY-MM-DD","ts":"…Z","note":"payload-i-…","raw":"<base64
// of 16 bytes>"}.
func AppendRow(b []byte, i int64) []byte {
	b = append(b, `{"k":`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `,"name":"user-`...)
	b = strconv.AppendInt(b, i, 10)
	u := FloorMod(i*37, 1_000_000_000)
	b = append(b, `","amount":"`...)
	b = strconv.AppendInt(b, u/100, 10)
	b = append(b, '.', byte('0'+u%100/10), byte('0'+u%10))
	b = append(b, `","qty":`...)
	b = strconv.AppendInt(b, FloorMod(i, 100_000), 10)
	b = append(b, `,"price":`...)
	b = strconv.AppendFloat(b, float64(i)*0.25, 'g', -1, 64)
	b = append(b, `,"flag":`...)
	b = strconv.AppendBool(b, i%2 == 0)
	b = append(b, `,"day":"`...)
	b = time.Unix((19000+FloorMod(i, 1000))*86400, 0).UTC().AppendFormat(b, "2006-01-02")
	b = append(b, `","ts":"`...)
	b = time.UnixMilli(1_700_000_000_000+i).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	b = append(b, `","note":"payload-`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `-0123456789abcdef0123456789abcdef","raw":"`...)
	var raw [16]byte
	for k := range 8 {
		raw[k] = byte(uint64(i) >> (56 - 8*k))
		raw[8+k] = raw[k]
	}
	b = base64.StdEncoding.AppendEncode(b, raw[:])
	return append(b, `"}`...)
}

// AppendUpsert appends the write entry {"id":"i","upsert":<row i>}.
func AppendUpsert(b []byte, i int64) []byte {
	b = append(b, `{"id":"`...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, `","upsert":`...)
	b = AppendRow(b, i)
	return append(b, '}')
}
