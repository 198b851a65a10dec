package writer

import (
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record/arrowlog"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// DefaultArrow is the ArrowFactory used when Options.Arrow is nil: the
// gateway's Arrow IPC builder (package arrowlog) with the table's codec.
func DefaultArrow(types []domain.DataType, compression string, zstdLevel int) (ArrowBuilder, error) {
	b, err := arrowlog.NewTableBuilder(types, compression, zstdLevel)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// arrowEncoded is implemented by Arrow builders that also take rows encoded
// ahead of time, on the request goroutines, by an encoder that is safe for
// concurrent use (arrowlog.Builder for schemas without nested columns): the
// row then goes from its Datums straight to Arrow value bytes once, instead
// of Datums -> CompactedRow (at encode) -> Datums -> Arrow (at drain).
type arrowEncoded interface {
	// RowEncoder returns the encoder, nil when rows must go through Append.
	RowEncoder() *arrowlog.RowEncoder
	// AppendEncoded adds one row encoded by RowEncoder.
	AppendEncoded(row []byte) error
}
