package http

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// fuzzRequest has every shape the request-JSON checker knows: nested
// structs, slices, maps, pointers, integers of both widths, booleans and a
// raw Fluss DataType document.
type fuzzRequest struct {
	Name    string            `json:"name"`
	Count   int               `json:"count"`
	Big     int64             `json:"big"`
	Flag    bool              `json:"flag"`
	Props   map[string]string `json:"props"`
	Keys    []string          `json:"keys"`
	Columns []struct {
		Name     string         `json:"name"`
		DataType jsontext.Value `json:"data_type"`
		Comment  *string        `json:"comment"`
	} `json:"columns"`
	Nested *struct {
		Values [][]int          `json:"values"`
		Maps   []map[string]int `json:"maps"`
	} `json:"nested"`
}

var requestJSONSeeds = []string{
	`{"name":"t","count":3,"big":-9223372036854775808,"flag":true,"props":{"a":"1"},"keys":["a","b"]}`,
	`{"columns":[{"name":"c","data_type":{"type":"ROW","fields":[{"name":"x","field_type":{"type":"ARRAY","element_type":{"type":"INT"}}}]}}]}`,
	`{"columns":[{"name":"c","data_type":{"type":"MAP","key_type":{"type":"STRING"},"value_type":{"type":"DECIMAL","precision":10,"scale":2}}}]}`,
	`{"nested":{"values":[[1,2],[3]],"maps":[{"a":1},{}]}}`,
	`{"name":"a","name":"b"}`,
	`{"props":{"k":"v","k":"w"}}`,
	`{"count":2147483648}`,
	`{"columns":[{"data_type":{"type":"INT","precison":3}}]}`,
	`[1,2,3]`,
	`{"name":"\u00e9\ud83d\ude00"}`,
	`{"unknown":[0,0,0,0]}`,
	`{"nested":{"values":[[[[[]]]]]}}`,
	`{"name":"x"} {"name":"y"}`,
}

// FuzzDecodeStrict drives the request-JSON parser of the catalog routes:
// it never panics, accepts only valid JSON that encoding/json decodes into
// the target, and keeps its messages short whatever the input (the field
// path shortens long keys).
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range requestJSONSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var dst fuzzRequest
		err := decodeStrict(body, &dst)
		if err == nil {
			if !json.Valid(body) {
				t.Fatalf("accepted invalid JSON %q", body)
			}
			var again fuzzRequest
			if uerr := json.Unmarshal(body, &again); uerr != nil {
				t.Fatalf("accepted %q, which encoding/json refuses: %v", body, uerr)
			}
			return
		}
		de := domain.AsError(err)
		if de == nil || de.Kind != domain.KindInvalidArgument {
			t.Fatalf("error %v is not invalid_argument", err)
		}
		// A path has at most maxJSONDepth segments of maxPathKeyInMessage
		// bytes (plus quoting); the rest of a message is short.
		if limit := 4096 + maxJSONDepth*(4*maxPathKeyInMessage+16); len(de.Message) > limit {
			t.Fatalf("message of %d bytes", len(de.Message))
		}
	})
}

// jsonEdgeSeeds are documents where JSON parsers tend to differ: escapes,
// surrogates, invalid UTF-8, duplicate names, numbers, whitespace and
// trailing data.
var jsonEdgeSeeds = []string{
	`{"a":1}`, " {\"a\" : [ 1 , 2.5e-3 , -0 ] }\n", `{"a":1,"a":2}`, `"\ud800"`, `"\udc00\ud800"`, "\"\xff\xfe\"",
	`"\u00e9\/\b"`, `[1,2,]`, `{"a":1} {"b":2}`, `{"a":1}x`, `01`, `1.`, `-`, `1e400`, `"\u2028<>&"`, "\"\u2028\"", ``, ` `,
	`[[[[]]]]`, `{"":null}`, `nul`, `true false`, "\"a\x00\"", `{"a":"b"` + "\t}",
}

// FuzzJSONCompat holds the two places where jsontext replaced
// encoding/json on request bodies to encoding/json's results: validJSON
// (the keyed NDJSON line check) accepts exactly what encoding/json's Valid
// accepted, and the idempotency fingerprint compacts every body to the
// bytes encoding/json's Compact gave, so the fingerprints already in
// ledgers stay valid.
func FuzzJSONCompat(f *testing.F) {
	for _, s := range append(jsonEdgeSeeds, requestJSONSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if got, want := validJSON(body), json.Valid(body); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json's Valid %v", body, got, want)
		}
		var buf bytes.Buffer
		want := body
		if json.Compact(&buf, body) == nil {
			want = buf.Bytes()
		}
		var got bytes.Buffer
		if !validJSON(body) || compactTo(&got, body) != nil {
			got.Reset()
			got.Write(body)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("compact(%q) = %q, encoding/json %q", body, got.Bytes(), want)
		}
	})
}
