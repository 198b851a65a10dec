package http

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecodeCreateTable decodes a create-table body of 64 columns of
// every type family, the typical catalog body (about 5 KiB).
//
//	go test -run '^$' -bench BenchmarkDecodeCreateTable -benchmem ./adapters/http/
func BenchmarkDecodeCreateTable(b *testing.B) {
	types := []string{`{"type":"INTEGER"}`, `{"type":"STRING"}`, `{"type":"DECIMAL","precision":10,"scale":2}`,
		`{"type":"ARRAY","element_type":{"type":"BIGINT","nullable":false}}`,
		`{"type":"MAP","key_type":{"type":"STRING","nullable":false},"value_type":{"type":"DOUBLE"}}`,
		`{"type":"ROW","fields":[{"name":"x","field_type":{"type":"INTEGER"}},{"name":"y","field_type":{"type":"CHAR","length":3},"description":"d"}]}`,
		`{"type":"TIMESTAMP_WITH_LOCAL_TIME_ZONE","precision":6}`, `{"type":"BYTES"}`}
	var sb strings.Builder
	sb.WriteString(`{"table_name":"t","columns":[`)
	for i := 0; i < 64; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"name":"c%d","data_type":%s,"comment":"column %d"}`, i, types[i%len(types)], i)
	}
	sb.WriteString(`],"primary_key":["c0"],"distribution":{"bucket_count":4,"bucket_keys":["c0"]},` +
		`"configs":{"table.replication.factor":"1"},"custom_properties":{"owner":"x"},"comment":"bench"}`)
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var req createTableRequest
		if err := decodeStrict(body, &req); err != nil {
			b.Fatal(err)
		}
		if _, err := req.toCommand("d"); err != nil {
			b.Fatal(err)
		}
	}
}
