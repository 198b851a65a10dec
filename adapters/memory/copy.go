package memory

import (
	"maps"
	"slices"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// The copy helpers keep the catalog's state private: nothing a caller passes
// in or gets back aliases a map, slice or nested type the catalog stores.

func copyDatabaseDescriptor(d domain.DatabaseDescriptor) domain.DatabaseDescriptor {
	d.CustomProperties = maps.Clone(d.CustomProperties)
	return d
}

func copyDatabaseInfo(i domain.DatabaseInfo) domain.DatabaseInfo {
	i.Descriptor = copyDatabaseDescriptor(i.Descriptor)
	return i
}

func copyTableInfo(i domain.TableInfo) domain.TableInfo {
	i.Descriptor = copyTableDescriptor(i.Descriptor)
	return i
}

func copyTableDescriptor(d domain.TableDescriptor) domain.TableDescriptor {
	d.Schema = copySchema(d.Schema)
	d.PartitionKeys = slices.Clone(d.PartitionKeys)
	d.BucketKeys = slices.Clone(d.BucketKeys)
	d.Properties = maps.Clone(d.Properties)
	d.CustomProperties = maps.Clone(d.CustomProperties)
	return d
}

func copySchema(s domain.Schema) domain.Schema {
	cols := make([]domain.Column, len(s.Columns))
	for i, c := range s.Columns {
		c.Type = copyDataType(c.Type)
		cols[i] = c
	}
	s.Columns = cols
	s.PrimaryKey = slices.Clone(s.PrimaryKey)
	s.AutoIncrementColumn = slices.Clone(s.AutoIncrementColumn)
	return s
}

func copyDataType(t domain.DataType) domain.DataType {
	t.Element = copyDataTypePtr(t.Element)
	t.Key = copyDataTypePtr(t.Key)
	t.Value = copyDataTypePtr(t.Value)
	if t.Fields != nil {
		fields := make([]domain.DataField, len(t.Fields))
		for i, f := range t.Fields {
			f.Type = copyDataType(f.Type)
			fields[i] = f
		}
		t.Fields = fields
	}
	return t
}

func copyDataTypePtr(t *domain.DataType) *domain.DataType {
	if t == nil {
		return nil
	}
	c := copyDataType(*t)
	return &c
}
