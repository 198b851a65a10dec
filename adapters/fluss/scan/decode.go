package scan

import (
	"fmt"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record/arrowlog"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// batchDecoder decodes the log batches of one schema (and projection) into
// rows of the decoded columns, with their change types. Not safe for
// concurrent use (one per Fetch).
type batchDecoder struct {
	arrow *arrowlog.Reader
	row   record.RowDecoder
	// mapping maps the wanted columns onto the decoded ones (plan.project).
	mapping []int
}

func newBatchDecoder(format logFormat, cols []domain.Column, maxBuffer int) (*batchDecoder, error) {
	d := &batchDecoder{}
	types := make([]domain.DataType, len(cols))
	for i, c := range cols {
		types[i] = c.Type
	}
	var err error
	switch format {
	case logArrow:
		if d.arrow, err = arrowlog.NewReaderFromTypes(types); err == nil {
			d.arrow.SetMaxBufferSize(maxBuffer)
		}
	case logIndexed:
		d.row, err = record.NewRowDecoder(record.FormatIndexed, types)
	case logCompacted:
		d.row, err = record.NewRowDecoder(record.FormatCompacted, types)
	default:
		err = fmt.Errorf("unknown log format %d", format)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// decode returns the rows of one whole batch (h is its decoded header) and
// their change types (nil: all append-only).
func (d *batchDecoder) decode(batch []byte, h *record.LogBatch) ([][]domain.Datum, []record.ChangeType, error) {
	if d.arrow != nil {
		lb, _, err := d.arrow.ReadLogBatch(batch)
		if err != nil {
			return nil, nil, err
		}
		return lb.Rows, lb.ChangeTypes, nil
	}
	recs, err := h.RowRecords()
	if err != nil {
		return nil, nil, err
	}
	rows := make([][]domain.Datum, len(recs))
	cts := make([]record.ChangeType, len(recs))
	for i, r := range recs {
		if rows[i], err = d.row.DecodeRow(nil, r.Row); err != nil {
			return nil, nil, fmt.Errorf("record %d: %w", i, err)
		}
		cts[i] = r.ChangeType
	}
	return rows, cts, nil
}
