package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

// unhex turns the spaced/pipe-separated hex of the protocol document into bytes.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.NewReplacer(" ", "", "|", "", "\n", "").Replace(s)
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// Byte vectors of docs/fluss-rpc.md#worked-frames (the ApiVersions, error and
// SASL/PLAIN frames), constructed from the layout there and recomputed byte
// for byte by an independent encoder.
const (
	docAPIVersionsRequest  = "00 00 00 19 | 03 E8 | 00 00 | 00 00 00 00 | 0A 08 66 6C 75 73 73 2D 67 6F 12 05 30 2E 31 2E 30"
	docAPIVersionsResponse = "00 00 00 10 | 00 | 00 00 00 00 | 0A 07 08 E8 07 10 00 18 00 | 10 02"
	docErrorResponse       = "00 00 00 0A | 01 | 00 00 00 07 | 08 2E 12 01 78"
	docErrorCodeMinusOne   = "08 FF FF FF FF FF FF FF FF FF 01"
	docAuthenticatePlain   = "0A 05 50 4C 41 49 4E 12 0D 00 61 6C 69 63 65 00 73 65 63 72 65 74"
	docAuthenticateOK      = "0A 00"
)

func TestRequestFrameMatchesDocVector(t *testing.T) {
	t.Parallel()
	body, err := proto.Marshal(&flusspb.ApiVersionsRequest{
		ClientSoftwareName:    proto.String("fluss-go"),
		ClientSoftwareVersion: proto.String("0.1.0"),
	})
	require.NoError(t, err)

	got := AppendRequest(nil, RequestHeader{Key: KeyAPIVersions, Version: 0, RequestID: 0}, body)
	assert.Equal(t, unhex(t, docAPIVersionsRequest), got)

	// And back.
	payload, err := ReadFrame(bytes.NewReader(got), MaxRequestFrameSize)
	require.NoError(t, err)
	h, b, err := DecodeRequest(payload)
	require.NoError(t, err)
	assert.Equal(t, RequestHeader{Key: KeyAPIVersions}, h)
	var m flusspb.ApiVersionsRequest
	require.NoError(t, proto.Unmarshal(b, &m))
	assert.Equal(t, "fluss-go", m.GetClientSoftwareName())
	assert.Equal(t, "0.1.0", m.GetClientSoftwareVersion())
}

func TestSuccessResponseMatchesDocVector(t *testing.T) {
	t.Parallel()
	// Required min/max 0 must still be written (proto2): 10 00 18 00.
	body, err := proto.Marshal(&flusspb.ApiVersionsResponse{
		ApiVersions: []*flusspb.PbApiVersion{{
			ApiKey: proto.Int32(1000), MinVersion: proto.Int32(0), MaxVersion: proto.Int32(0),
		}},
		ServerType: proto.Int32(2),
	})
	require.NoError(t, err)
	got := AppendResponse(nil, ResponseSuccess, 0, body)
	assert.Equal(t, unhex(t, docAPIVersionsResponse), got)

	resp, err := DecodeResponse(got[LengthSize:])
	require.NoError(t, err)
	assert.Equal(t, ResponseSuccess, resp.Type)
	assert.Equal(t, int32(0), resp.RequestID)
	var m flusspb.ApiVersionsResponse
	require.NoError(t, proto.Unmarshal(resp.Body, &m))
	require.Len(t, m.GetApiVersions(), 1)
	assert.Equal(t, int32(1000), m.GetApiVersions()[0].GetApiKey())
	assert.Equal(t, int32(2), m.GetServerType())
}

func TestErrorResponseMatchesDocVector(t *testing.T) {
	t.Parallel()
	got := AppendResponse(nil, ResponseError, 7, AppendErrorResponse(nil, CodeAuthenticateException, "x"))
	assert.Equal(t, unhex(t, docErrorResponse), got)

	resp, err := DecodeResponse(got[LengthSize:])
	require.NoError(t, err)
	assert.Equal(t, ResponseError, resp.Type)
	assert.Equal(t, int32(7), resp.RequestID)
	se, err := DecodeErrorResponse(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, CodeAuthenticateException, se.Code)
	assert.Equal(t, "x", se.Message)
}

func TestNegativeErrorCodeIsTenByteVarint(t *testing.T) {
	t.Parallel()
	got := AppendErrorResponse(nil, CodeUnknownServerError, "")
	assert.Equal(t, unhex(t, docErrorCodeMinusOne), got)
	se, err := DecodeErrorResponse(got)
	require.NoError(t, err)
	assert.Equal(t, CodeUnknownServerError, se.Code)
	assert.Equal(t, CodeUnknownServerError.Description(), se.Message, "absent message falls back to the description")
}

func TestAuthenticateMatchesDocVector(t *testing.T) {
	t.Parallel()
	body, err := proto.Marshal(&flusspb.AuthenticateRequest{
		Protocol: proto.String("PLAIN"),
		Token:    []byte("\x00alice\x00secret"),
	})
	require.NoError(t, err)
	assert.Equal(t, unhex(t, docAuthenticatePlain), body)

	var ok flusspb.AuthenticateResponse
	require.NoError(t, proto.Unmarshal(unhex(t, docAuthenticateOK), &ok))
	assert.NotNil(t, ok.Challenge, "present-but-empty challenge keeps its presence")
	assert.Empty(t, ok.GetChallenge())
}

func TestServerFailureHasNoRequestID(t *testing.T) {
	t.Parallel()
	body := AppendErrorResponse(nil, CodeCorruptMessage, "boom")
	got := AppendResponse(nil, ResponseServerFailure, 99, body)
	// length = 1 (type) + body; no request id on the wire.
	assert.Equal(t, []byte{0, 0, 0, byte(1 + len(body)), 2}, got[:5])
	assert.Equal(t, body, got[5:])

	resp, err := DecodeResponse(got[LengthSize:])
	require.NoError(t, err)
	assert.Equal(t, ResponseServerFailure, resp.Type)
	assert.Equal(t, int32(0), resp.RequestID)
	assert.Equal(t, body, resp.Body)
}

func TestRequiredFieldsAreEnforced(t *testing.T) {
	t.Parallel()
	// A missing required field would make the server drop the request
	// silently, so the client must refuse to encode it.
	_, err := proto.Marshal(&flusspb.DropDatabaseRequest{DatabaseName: proto.String("db"), IgnoreIfNotExists: proto.Bool(false)})
	require.Error(t, err)

	// false and 0 are written, not omitted.
	b, err := proto.Marshal(&flusspb.DropDatabaseRequest{
		DatabaseName: proto.String("d"), IgnoreIfNotExists: proto.Bool(false), Cascade: proto.Bool(false),
	})
	require.NoError(t, err)
	assert.Equal(t, []byte{0x0A, 0x01, 'd', 0x10, 0x00, 0x18, 0x00}, b)
}

func TestPackedFieldsArePacked(t *testing.T) {
	t.Parallel()
	// replica_id (field 3) is [packed = true] in FlussApi.proto: one
	// length-delimited record (tag 0x1A), not one varint per element.
	b, err := proto.Marshal(&flusspb.PbBucketMetadata{
		BucketId: proto.Int32(0), ReplicaId: []int32{1, 2, 3},
	})
	require.NoError(t, err)
	assert.Equal(t, []byte{0x08, 0x00, 0x1A, 0x03, 0x01, 0x02, 0x03}, b)

	// Negative int32 in a required field: 10-byte varint (ListOffsets
	// follower_server_id = -1).
	b, err = proto.Marshal(&flusspb.ListOffsetsRequest{
		FollowerServerId: proto.Int32(-1), OffsetType: proto.Int32(1), TableId: proto.Int64(5),
	})
	require.NoError(t, err)
	assert.Equal(t, unhex(t, "08 FF FF FF FF FF FF FF FF FF 01 10 01 18 05"), b)
}

func TestDecodeResponseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		payload []byte
	}{
		{"empty", nil},
		{"success without id", []byte{0, 0, 0}},
		{"error without id", []byte{1, 0}},
		{"unknown type", []byte{3, 0, 0, 0, 1}},
		{"negative type", []byte{0xFF, 0, 0, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeResponse(tc.payload)
			require.ErrorIs(t, err, ErrMalformed)
		})
	}
}

func TestDecodeRequestShort(t *testing.T) {
	t.Parallel()
	_, _, err := DecodeRequest([]byte{0x03, 0xE8, 0, 0, 0, 0, 0})
	require.ErrorIs(t, err, ErrMalformed)
}

func TestReadFrame(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      []byte
		max     int
		want    []byte
		wantErr error
	}{
		{"ok", []byte{0, 0, 0, 2, 0xAA, 0xBB}, 0, []byte{0xAA, 0xBB}, nil},
		{"empty payload", []byte{0, 0, 0, 0}, 0, []byte{}, nil},
		{"clean eof", nil, 0, nil, io.EOF},
		{"short prefix", []byte{0, 0}, 0, nil, io.ErrUnexpectedEOF},
		{"short payload", []byte{0, 0, 0, 3, 1}, 0, nil, io.ErrUnexpectedEOF},
		{"at limit", []byte{0, 0, 0, 2, 1, 2}, 6, []byte{1, 2}, nil},
		{"over limit", []byte{0, 0, 0, 3, 1, 2, 3}, 6, nil, ErrFrameTooLarge},
		{"negative", []byte{0x80, 0, 0, 0}, 0, nil, ErrMalformed},
		{"huge default limit", []byte{0x7F, 0xFF, 0xFF, 0xFF}, 0, nil, ErrFrameTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ReadFrame(bytes.NewReader(tc.in), tc.max)
			if tc.wantErr != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, tc.wantErr), "got %v, want %v", err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestFinishFrame(t *testing.T) {
	t.Parallel()
	buf := []byte{0xEE} // bytes before the frame are left alone
	start := len(buf)
	buf = BeginRequest(buf, RequestHeader{Key: KeyPutKv, Version: 1, RequestID: 0x01020304})
	buf = append(buf, 0x99)
	require.NoError(t, FinishFrame(buf, start))
	assert.Equal(t, []byte{0xEE, 0, 0, 0, 9, 0x03, 0xF8, 0, 1, 1, 2, 3, 4, 0x99}, buf)

	require.Error(t, FinishFrame(buf, len(buf)-2))
	require.Error(t, FinishFrame(buf, -1))
}
