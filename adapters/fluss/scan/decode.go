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
	// identity: mapping is 0, 1, ..., len(mapping)-1.
	identity bool
}

func newBatchDecoder(format logFormat, cols []domain.Column, maxBuffer int) (*batchDecoder, error) {
	d := &batchDecoder{}
	types := domain.ColumnTypes(cols)
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

// decodeArrow decodes the records area of an ARROW batch: the change-type
// vector (one byte per record) when the batch is not append-only, then one
// Arrow RecordBatch message (record/arrowlog; DefaultLogRecordBatch,
// ArrowLogRecordReadContext in apache/fluss).
func (d *batchDecoder) decodeArrow(h *record.LogBatch) ([][]domain.Datum, []record.ChangeType, error) {
	records := h.Records
	var cts []record.ChangeType
	if h.RecordCount < 0 {
		return nil, nil, fmt.Errorf("negative record count %d", h.RecordCount)
	}
	if !h.AppendOnly() {
		if int64(h.RecordCount) > int64(len(records)) {
			return nil, nil, fmt.Errorf("%d change types in a %d-byte records area", h.RecordCount, len(records))
		}
		cts = make([]record.ChangeType, h.RecordCount)
		for i := range cts {
			ct := record.ChangeType(records[i])
			if ct < record.ChangeAppendOnly || ct > record.ChangeDelete {
				return nil, nil, fmt.Errorf("record %d: unknown change type %d", i, records[i])
			}
			cts[i] = ct
		}
		records = records[h.RecordCount:]
	}
	if len(records) == 0 {
		if h.RecordCount != 0 {
			return nil, nil, fmt.Errorf("the batch claims %d records but has no Arrow message", h.RecordCount)
		}
		return nil, nil, nil
	}
	m, rows, err := d.arrow.ReadRecords(records)
	if err != nil {
		return nil, nil, err
	}
	if m.Length != int64(h.RecordCount) {
		return nil, nil, fmt.Errorf("the batch header says %d records, its Arrow message has %d", h.RecordCount, m.Length)
	}
	return rows, cts, nil
}

// decode returns the rows of one whole batch (h is its decoded header) and
// their change types (nil: all append-only).
func (d *batchDecoder) decode(batch []byte, h *record.LogBatch) ([][]domain.Datum, []record.ChangeType, error) {
	if d.arrow != nil {
		return d.decodeArrow(h)
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
