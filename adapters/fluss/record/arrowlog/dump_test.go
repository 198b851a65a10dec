package arrowlog

import (
	"encoding/hex"
	"fmt"
	"os"
	"testing"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
)

func TestDumpJava(t *testing.T) {
	for _, f := range []string{"none", "lz4_frame", "zstd"} {
		b, _ := os.ReadFile("testdata/java_" + f + ".bin")
		lb, _, err := record.ReadLogBatch(b)
		fmt.Println(f, err, len(b), lb.RecordCount, lb.Attributes, lb.WriterID, lb.BatchSequence)
		m, err := ParseRecordBatchMessage(lb.Records)
		fmt.Println(err, m.MetadataLength, m.BodyLength, m.Compressed, m.Codec, len(m.Nodes), len(m.Buffers))
		if f == "none" {
			fmt.Println(m.Nodes[:6])
			fmt.Println(m.Buffers[:12])
			fmt.Println(hex.Dump(lb.Records[:8+m.MetadataLength]))
		}
		if f == "zstd" {
			fmt.Println(m.Buffers[:12])
			for _, bf := range m.Buffers[:12] {
				x := m.Body[bf.Offset : bf.Offset+bf.Length]
				if len(x) > 24 { x = x[:24] }
				fmt.Printf("%x\n", x)
			}
		}
	}
}
