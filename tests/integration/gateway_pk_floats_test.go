//go:build integration

package integration

import (
	"bytes"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayPKFloatsAndDates: DOUBLE, FLOAT and DATE values of a
// primary-key table's JSON upserts, written through the gateway (numbers the
// decoder's exact fast path takes and numbers it leaves to strconv, issue
// 22), read back by the independent peer client bit for bit.
func TestGatewayPKFloatsAndDates(t *testing.T) {
	g := startGateway(t)
	db := newDatabase(t, g, "gw_flt")
	records := createTable(t, g.base, db, "m", columns("id INTEGER NOT NULL", "d DOUBLE", "f FLOAT", "day DATE"),
		map[string]any{"primary_key": []any{"id"}, "distribution": map[string]any{"bucket_count": 2}})

	tests := []struct {
		double string // the JSON number of d
		float  string // the JSON number of f
		day    string
	}{
		{"0.25", "0.25", "2026-11-30"},
		{"-0.1", "0.1", "1970-01-01"},
		{"1.25e+06", "1.25e+06", "1969-12-31"},
		{"123456789012345", "16777217", "2000-02-29"},
		{"1e23", "3.4e38", "9999-12-31"},                     // 10^23: not exact, strconv's
		{"9007199254740993", "1.17549435e-38", "0001-01-01"}, // 16 digits: strconv's
		{"2.2250738585072014e-308", "-7.5e-5", "2024-05-01"}, // the smallest normal double
		{"-0", "0", "2026-01-31"},
	}
	body := []byte(`{"entries":[`)
	for i, tc := range tests {
		if i > 0 {
			body = append(body, ',')
		}
		body = fmt.Appendf(body, `{"id":"e%d","upsert":{"id":%d,"d":%s,"f":%s,"day":"%s"}}`, i, i, tc.double, tc.float, tc.day)
	}
	body = append(body, "]}"...)
	req, err := http.NewRequest(http.MethodPost, g.base+records, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	for i, tc := range tests {
		t.Run(tc.double, func(t *testing.T) {
			p := peerCmd(t, "lookup", db, "m", "--key", fmt.Sprintf(`{"id": %d}`, i))
			require.Equal(t, true, p["found"], "%v", p)
			row := p["row"].(map[string]any)
			wantD, err := strconv.ParseFloat(tc.double, 64)
			require.NoError(t, err)
			wantF, err := strconv.ParseFloat(tc.float, 32)
			require.NoError(t, err)
			gotD, _ := row["d"].(float64)
			gotF, _ := row["f"].(float64)
			assert.Equal(t, math.Float64bits(wantD), math.Float64bits(gotD), "DOUBLE %s: peer read %v", tc.double, row["d"])
			assert.Equal(t, math.Float32bits(float32(wantF)), math.Float32bits(float32(gotF)), "FLOAT %s: peer read %v", tc.float, row["f"])
			assert.Equal(t, tc.day, row["day"])
		})
	}
}
