//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanAcrossSchemaChange: rows written before and after an ALTER TABLE
// ... ADD COLUMN are read back whole and projected (with the new column,
// null in the older rows; and without it), from one gateway that scanned
// the table before the change and one started after it, ARROW and INDEXED.
func TestScanAcrossSchemaChange(t *testing.T) {
	for _, format := range []string{"ARROW", "INDEXED"} {
		t.Run(format, func(t *testing.T) {
			g := startGateway(t, scanTokenKey)
			db := newDatabase(t, g, "gw_scan_evo")
			createLogTable(t, g, db, "ev", 1, map[string]any{"configs": map[string]any{"table.log.format": format}})
			appendRows(t, g, db, "ev", map[string]any{"id": 1, "msg": "before", "amount": "1.00"}, map[string]any{"id": 2, "msg": "before", "amount": "2.00"})
			// Scanned (and cached) before the change, projected.
			a := g.scan(t, db, "ev", map[string]any{"start": map[string]any{"position": "earliest"}, "columns": []any{"msg", "id"}})
			require.Len(t, a.Records, 2)

			// Altered through another replica: g's cached definition is stale.
			g2 := startGateway(t, scanTokenKey)
			status, body := g2.do(http.MethodPatch, "/databases/"+db+"/tables/ev", map[string]any{"changes": []any{
				map[string]any{"kind": "add_column", "name": "note", "data_type": map[string]any{"type": "STRING"}}}})
			require.Equal(t, http.StatusNoContent, status, "%v", body)
			if format == "ARROW" {
				wrPeer(t, nil, "append", db, "ev", "--row", `{"id": 3, "msg": "after", "amount": "3.00", "note": "n3"}`)
			} else {
				// pyfluss cannot scan INDEXED tables, and the gateway cannot
				// read its appends to one as INDEXED: the row is the gateway's.
				appendRows(t, g2, db, "ev", map[string]any{"id": 3, "msg": "after", "amount": "3.00", "note": "n3"})
			}

			for gi, gw := range []*gateway{g, g2} {
				for _, cols := range [][]any{nil, {"note", "id"}, {"id", "msg"}, {"amount"}} {
					req := map[string]any{"start": map[string]any{"position": "earliest"}, "max_rows": 100}
					if cols != nil {
						req["columns"] = cols
					}
					status, raw := gw.raw(http.MethodPost, "/databases/"+db+"/tables/ev/records/scan", req, "")
					require.Equal(t, http.StatusOK, status, "gateway %d columns %v: %s", gi, cols, raw)
					var a scanAnswer
					require.NoError(t, json.Unmarshal(raw, &a))
					require.Len(t, a.Records, 3, "gateway %d columns %v: %s", gi, cols, raw)
					for _, r := range a.Records {
						id := fmt.Sprint(r.Row["id"])
						if cols != nil {
							assert.Len(t, r.Row, len(cols), "gateway %d columns %v: %v", gi, cols, r.Row)
						}
						if c := fmt.Sprint(cols); cols == nil || c == "[note id]" {
							want := any(nil)
							if id == "3" {
								want = "n3"
							}
							assert.Equal(t, want, r.Row["note"], "gateway %d columns %v: %v", gi, cols, r.Row)
						}
						if cols == nil || fmt.Sprint(cols) == "[id msg]" {
							assert.NotEmpty(t, r.Row["msg"])
						}
					}
				}
			}
		})
	}
}
