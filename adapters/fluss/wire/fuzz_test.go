package wire

import (
	"bytes"
	"testing"
)

// FuzzReadResponse feeds arbitrary bytes through the client's response path:
// ReadFrame, DecodeResponse and, for error frames, DecodeErrorResponse. None
// of them may panic, and whatever decodes must re-encode to the same bytes.
func FuzzReadResponse(f *testing.F) {
	f.Add(unhex(f, docAPIVersionsResponse))
	f.Add(unhex(f, docErrorResponse))
	f.Add(AppendResponse(nil, ResponseServerFailure, 0, AppendErrorResponse(nil, CodeUnknownServerError, "trace")))
	f.Add([]byte{0, 0, 0, 1, 2})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF})
	f.Add([]byte{0, 0, 0, 5, 9, 0, 0, 0, 1})

	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		for {
			payload, err := ReadFrame(r, 1<<16)
			if err != nil {
				return
			}
			resp, err := DecodeResponse(payload)
			if err != nil {
				continue
			}
			again := AppendResponse(nil, resp.Type, resp.RequestID, resp.Body)
			if !bytes.Equal(again[LengthSize:], payload) {
				t.Fatalf("re-encoding %x gave %x", payload, again[LengthSize:])
			}
			if resp.Type != ResponseSuccess {
				if se, err := DecodeErrorResponse(resp.Body); err == nil && se.Message == "" && se.Code.Description() != "" {
					t.Fatalf("empty message not replaced for %v", se.Code)
				}
			}
		}
	})
}

// FuzzDecodeRequest checks the server-side header split used by the fake
// server: no panic, and the header round-trips.
func FuzzDecodeRequest(f *testing.F) {
	f.Add(unhex(f, docAPIVersionsRequest)[LengthSize:])
	f.Add([]byte{0x03})
	f.Fuzz(func(t *testing.T, payload []byte) {
		h, body, err := DecodeRequest(payload)
		if err != nil {
			return
		}
		again := AppendRequest(nil, h, body)
		if !bytes.Equal(again[LengthSize:], payload) {
			t.Fatalf("re-encoding %x gave %x", payload, again[LengthSize:])
		}
	})
}
