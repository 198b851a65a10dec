package bench10

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendRow(t *testing.T) {
	tests := []struct {
		name string
		i    int64
		want string
	}{
		{name: "row 3", i: 3, want: `{"k":3,"name":"user-3","amount":"1.11","qty":3,"price":0.75,"flag":false,` +
			`"day":"2022-01-11","ts":"2023-11-14T22:13:20.003Z","note":"payload-3-0123456789abcdef0123456789abcdef",` +
			`"raw":"AAAAAAAAAAMAAAAAAAAAAw=="}`},
		{name: "negative keys take Java's floorMod", i: -1, want: `{"k":-1,"name":"user--1","amount":"9999999.63","qty":99999,"price":-0.25,"flag":false,` +
			`"day":"2024-10-03","ts":"2023-11-14T22:13:19.999Z","note":"payload--1-0123456789abcdef0123456789abcdef",` +
			`"raw":"/////////////////////w=="}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendRow(nil, tt.i))
			assert.Equal(t, tt.want, got)
			assert.True(t, json.Valid([]byte(got)))
		})
	}
}

func TestAppendUpsert(t *testing.T) {
	var e struct {
		ID     string          `json:"id"`
		Upsert json.RawMessage `json:"upsert"`
	}
	require.NoError(t, json.Unmarshal(AppendUpsert([]byte{}, 42), &e))
	assert.Equal(t, "42", e.ID)
	assert.Equal(t, string(AppendRow(nil, 42)), string(e.Upsert))
}
