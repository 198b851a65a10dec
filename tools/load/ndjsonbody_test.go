package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBenchNDJSONBodies: the NDJSON bodies hold the JSON documents'
// entries, one per line, in the same requests.
func TestBenchNDJSONBodies(t *testing.T) {
	for _, op := range []string{"append", "upsert"} {
		docs := benchBodies(op, -50, 120, 40)
		nd := benchNDJSONBodies(op, -50, 120, 40)
		require.Len(t, nd, len(docs))
		for k := range docs {
			var doc struct {
				Entries []json.RawMessage `json:"entries"`
			}
			require.NoError(t, json.Unmarshal(docs[k], &doc))
			lines := bytes.Split(bytes.TrimSuffix(nd[k], []byte("\n")), []byte("\n"))
			require.Len(t, lines, len(doc.Entries), "request %d", k)
			for i, l := range lines {
				assert.Equal(t, string(doc.Entries[i]), string(l), "request %d line %d", k, i)
			}
		}
	}
}
