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
