package main

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/internal/bench10"
)

// row renders the checked columns of id's row as the gateway does (k, a
// BIGINT, as a string), with an unchecked column between them.
func benchRowJSON(id int64, name string) string {
	return `{"k":"` + strconv.FormatInt(id, 10) + `","name":"` + name + `","amount":"1.00","qty":` +
		strconv.FormatInt(bench10.FloorMod(id, 100_000), 10) + `,"raw":{"x":[1,2]},"note":"payload-` + strconv.FormatInt(id, 10) +
		`-0123456789abcdef0123456789abcdef"}`
}

func TestCheckLookup(t *testing.T) {
	const rows = 1000
	ids := []int64{7, 2_000_000_003} // present, missing
	good7 := benchRowJSON(7, "user-7")
	tests := []struct {
		name    string
		raw     string
		prefix  bool
		bad     int
		wantErr string
	}{
		{name: "key answer right", raw: `{"schema_id":1,"results":[{"input_index":0,"found":true,"row":` + good7 +
			`},{"input_index":1,"found":false,"row":null}]}`},
		{name: "results in another order", raw: `{"results":[{"input_index":1,"found":false,"row":null},{"input_index":0,"found":true,"row":` + good7 + `}]}`},
		{name: "key row wrong", raw: `{"results":[{"input_index":0,"found":true,"row":` + benchRowJSON(7, "user-8") +
			`},{"input_index":1,"found":false,"row":null}]}`, bad: 1},
		{name: "missing key found", raw: `{"results":[{"input_index":0,"found":true,"row":` + good7 +
			`},{"input_index":1,"found":true,"row":` + good7 + `}]}`, bad: 1},
		{name: "present key not found", raw: `{"results":[{"input_index":0,"found":false,"row":null},{"input_index":1,"found":false,"row":null}]}`, bad: 1},
		{name: "input index out of range", raw: `{"results":[{"input_index":5,"found":true,"row":` + good7 +
			`},{"input_index":1,"found":false,"row":null}]}`, bad: 1},
		{name: "prefix answer right", prefix: true, raw: `{"schema_id":1,"results":[{"input_index":0,"row_count":1,"truncated":false,"rows":[` + good7 +
			`]},{"input_index":1,"row_count":0,"truncated":false,"rows":[]}]}`},
		{name: "prefix with two rows", prefix: true, raw: `{"results":[{"input_index":0,"row_count":2,"rows":[` + good7 + `,` + good7 +
			`]},{"input_index":1,"row_count":0,"rows":[]}]}`, bad: 1},
		{name: "missing prefix with a row", prefix: true, raw: `{"results":[{"input_index":0,"row_count":1,"rows":[` + good7 +
			`]},{"input_index":1,"row_count":1,"rows":[` + good7 + `]}]}`, bad: 1},
		{name: "prefix row wrong note", prefix: true, raw: `{"results":[{"input_index":0,"row_count":1,"rows":[{"k":7,"name":"user-7","qty":7,"note":"x"}]},` +
			`{"input_index":1,"row_count":0,"rows":[]}]}`, bad: 1},
		{name: "a result missing", raw: `{"results":[{"input_index":0,"found":true,"row":` + good7 + `}]}`, bad: 2, wantErr: "1 results for 2 keys"},
		{name: "malformed", raw: `{"results":[{"input_index":0,`, bad: 2, wantErr: "EOF"},
		{name: "not an object", raw: `[1]`, bad: 2, wantErr: "expected an object"},
		{name: "trailing data", raw: `{"results":[]} {}`, bad: 2, wantErr: "after the answer"},
		{name: "k neither number nor string", raw: `{"results":[{"input_index":0,"found":true,"row":{"k":true}}]}`, bad: 2, wantErr: "expected an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad, err := checkLookup([]byte(tt.raw), ids, rows, tt.prefix)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.bad, bad)
		})
	}
}

// BenchmarkCheckLookup checks a 16-prefix answer, 12 present.
func BenchmarkCheckLookup(b *testing.B) {
	ids := make([]int64, 16)
	raw := []byte(`{"schema_id":1,"results":[`)
	for i := range ids {
		ids[i] = lookupID(int64(i), 1000)
		if i > 0 {
			raw = append(raw, ',')
		}
		raw = append(raw, `{"input_index":`+strconv.Itoa(i)...)
		if ids[i] < 1000 {
			raw = append(raw, `,"row_count":1,"truncated":false,"rows":[`+benchRowJSON(ids[i], "user-"+strconv.FormatInt(ids[i], 10))+`]}`...)
		} else {
			raw = append(raw, `,"row_count":0,"truncated":false,"rows":[]}`...)
		}
	}
	raw = append(raw, "]}"...)
	b.ReportAllocs()
	for b.Loop() {
		if bad, err := checkLookup(raw, ids, 1000, true); bad != 0 || err != nil {
			b.Fatal(bad, err)
		}
	}
}
