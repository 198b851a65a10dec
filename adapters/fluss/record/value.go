package record

import (
	"encoding/binary"
	"sync"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Lookup values (row/encode/ValueEncoder.java, ValueDecoder.java): the bytes
// the server stores for a key and returns from Lookup and PrefixLookup are
//
//	int16 LE schemaId, then the row in the table's kv format.
//
// PutKv values carry no such prefix (the batch header holds the schema id).

// ValueSchemaIDSize is the size of the schema id that prefixes a stored value.
const ValueSchemaIDSize = 2

// SplitValue splits a stored value into its schema id and row bytes (aliasing v).
func SplitValue(v []byte) (schemaID int16, row []byte, err error) {
	if len(v) < ValueSchemaIDSize {
		return 0, nil, corrupt("value of %d bytes is shorter than its schema id", len(v))
	}
	return int16(binary.LittleEndian.Uint16(v)), v[ValueSchemaIDSize:], nil
}

// AppendValue appends a stored value (schema id then row bytes) to dst, as
// ValueEncoder.encodeValue does; fakes and tests use it to build lookup answers.
func AppendValue(dst []byte, schemaID int16, row []byte) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, uint16(schemaID))
	return append(dst, row...)
}

// SchemaResolver returns the column types of a table schema by id; a
// ValueDecoder calls it once per schema id it meets.
type SchemaResolver func(schemaID int32) ([]domain.DataType, error)

// ValueDecoder decodes lookup values whose rows may have been written under
// different schemas of one table. Decoders are built per schema id on first
// use and cached. It is safe for concurrent use.
type ValueDecoder struct {
	format  RowFormat
	resolve SchemaResolver

	mu       sync.RWMutex
	decoders map[int16]RowDecoder
}

// NewValueDecoder returns a decoder for values of a table whose kv format is
// format; resolve supplies the column types of each schema id.
func NewValueDecoder(format RowFormat, resolve SchemaResolver) *ValueDecoder {
	return &ValueDecoder{format: format, resolve: resolve, decoders: make(map[int16]RowDecoder)}
}

// Decode splits value into its schema id and row and decodes the row with
// that schema into dst (reusing its capacity). Byte slices alias value. Errors
// come from the resolver, from an unknown format, or wrap ErrCorrupt.
func (d *ValueDecoder) Decode(dst []domain.Datum, value []byte) (int16, []domain.Datum, error) {
	schemaID, row, err := SplitValue(value)
	if err != nil {
		return 0, nil, err
	}
	dec, err := d.decoder(schemaID)
	if err != nil {
		return schemaID, nil, err
	}
	out, err := dec.DecodeRow(dst, row)
	return schemaID, out, err
}

func (d *ValueDecoder) decoder(schemaID int16) (RowDecoder, error) {
	d.mu.RLock()
	dec, ok := d.decoders[schemaID]
	d.mu.RUnlock()
	if ok {
		return dec, nil
	}
	types, err := d.resolve(int32(schemaID))
	if err != nil {
		return nil, err
	}
	if dec, err = NewRowDecoder(d.format, types); err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.decoders[schemaID] = dec
	d.mu.Unlock()
	return dec, nil
}
