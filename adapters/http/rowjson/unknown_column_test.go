package rowjson

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestUnknownColumnIsMarked: every refusal about a column name the schema
// does not have carries domain.ErrUnknownColumn (the application refreshes
// the schema once on it), in entries, partial_update_columns, lookup keys,
// prefixes and projections; other refusals do not.
func TestUnknownColumnIsMarked(t *testing.T) {
	t.Parallel()
	row := `{"id":1,"region":"eu","age":3}`
	cases := []struct {
		name    string
		decode  func(t *testing.T) error
		unknown bool
	}{
		{"entry column", func(t *testing.T) error {
			_, _, err := pkCodec(t).DecodeWrite([]byte(`{"entries":[{"id":"e1","upsert":{"id":1,"region":"eu","age":3,"nope":1}}]}`), Limits{})
			return err
		}, true},
		{"entry column before id", func(t *testing.T) error {
			_, _, err := pkCodec(t).DecodeWrite([]byte(`{"entries":[{"upsert":{"zz":{"a":1}},"id":"late"}]}`), Limits{})
			return err
		}, true},
		{"entry column after a value error", func(t *testing.T) error {
			_, _, err := pkCodec(t).DecodeWrite([]byte(`{"entries":[{"id":"e1","upsert":{"id":1,"region":"eu","age":"x","nope":1}}]}`), Limits{})
			return err
		}, true},
		{"partial_update_columns", func(t *testing.T) error {
			_, _, err := partialCodec(t).DecodeWrite([]byte(`{"partial_update_columns":["id","zz"],"entries":[{"id":"e1","upsert":{"id":1}}]}`), Limits{})
			return err
		}, true},
		{"lookup key", func(t *testing.T) error {
			_, err := pkCodec(t).DecodeKeys([]byte(`{"keys":[{"id":1,"region":"eu","zz":1}]}`), Limits{})
			return err
		}, true},
		{"prefix_columns", func(t *testing.T) error {
			_, _, err := pkCodec(t).DecodePrefixes([]byte(`{"prefix_columns":["zz"],"prefixes":[]}`), Limits{})
			return err
		}, true},
		{"projection", func(t *testing.T) error {
			_, _, err := pkCodec(t).DecodeKeysWith([]byte(`{"columns":["nope"],"keys":[{"region":"eu","id":1}]}`), Limits{})
			return err
		}, true},
		{"value error", func(t *testing.T) error {
			_, _, err := pkCodec(t).DecodeWrite([]byte(`{"entries":[{"id":"e1","upsert":{"id":1,"region":"eu","age":"x"}}]}`), Limits{})
			return err
		}, false},
		{"missing key column", func(t *testing.T) error {
			_, err := pkCodec(t).DecodeKeys([]byte(`{"keys":[{"id":1}]}`), Limits{})
			return err
		}, false},
		{"valid", func(t *testing.T) error {
			_, _, err := pkCodec(t).DecodeWrite([]byte(`{"entries":[{"id":"e1","upsert":`+row+`}]}`), Limits{})
			return err
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.decode(t)
			if tc.name == "valid" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, domain.KindInvalidArgument, domain.KindOf(err))
			assert.Equal(t, tc.unknown, domain.IsUnknownColumn(err), "%v", err)
		})
	}
}
