package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Frame layout (apache/fluss: fluss-rpc/src/main/java/org/apache/fluss/rpc/
// protocol/MessageCodec.java; docs/fluss-rpc.md#framing).
// Every integer of the frame header is big-endian.
//
//	request:        int32 length | int16 api_key | int16 api_version | int32 request_id | body
//	SUCCESS/ERROR:  int32 length | int8 type     | int32 request_id  | body
//	SERVER_FAILURE: int32 length | int8 type (2) | ErrorResponse body            (no request id)
//
// length counts every byte after itself.
const (
	// LengthSize is the size of the frame length prefix in bytes.
	LengthSize = 4
	// RequestHeaderSize is the size of a request header after the length
	// prefix: api_key, api_version, request_id.
	RequestHeaderSize = 8
	// ResponseHeaderSize is the size of a SUCCESS or ERROR response header
	// after the length prefix: type, request_id.
	ResponseHeaderSize = 5
	// ServerFailureHeaderSize is the size of a SERVER_FAILURE header after the
	// length prefix: the type byte only.
	ServerFailureHeaderSize = 1

	// MaxRequestFrameSize is the largest request frame, length prefix
	// included, that a server with default settings accepts: 100 MiB
	// (netty.server.max-request-size, checked by Netty's
	// LengthFieldBasedFrameDecoder, which counts the prefix). A larger frame
	// makes the server answer SERVER_FAILURE and close the connection.
	MaxRequestFrameSize = 100 << 20
	// DefaultMaxResponseFrameSize is the client's default guard against a
	// corrupt length prefix: 256 MiB. The Java client has no limit; FetchLog
	// answers are bounded by the request's max_bytes (16 MiB by default).
	DefaultMaxResponseFrameSize = 256 << 20
)

// ResponseType is the type byte of a response frame
// (apache/fluss: fluss-rpc/.../rpc/protocol/ResponseType.java).
type ResponseType int8

// Response types.
const (
	// ResponseSuccess carries the API's response message.
	ResponseSuccess ResponseType = 0
	// ResponseError carries an ErrorResponse: the whole request failed.
	ResponseError ResponseType = 1
	// ResponseServerFailure carries an ErrorResponse and no request id: the
	// server's pipeline failed and it closes the connection after sending it.
	ResponseServerFailure ResponseType = 2
)

// String names the response type.
func (t ResponseType) String() string {
	switch t {
	case ResponseSuccess:
		return "SUCCESS_RESPONSE"
	case ResponseError:
		return "ERROR_RESPONSE"
	case ResponseServerFailure:
		return "SERVER_FAILURE"
	default:
		return fmt.Sprintf("RESPONSE_TYPE_%d", int8(t))
	}
}

// Framing errors. They wrap ErrMalformed so callers can test for any of them.
var (
	// ErrMalformed is the parent of every framing decode error.
	ErrMalformed = errors.New("wire: malformed frame")
	// ErrFrameTooLarge reports a length prefix above the reader's limit.
	ErrFrameTooLarge = fmt.Errorf("%w: frame too large", ErrMalformed)
)

// RequestHeader is the 8-byte header that follows a request's length prefix.
type RequestHeader struct {
	Key       APIKey
	Version   int16
	RequestID int32
}

// BeginRequest appends a request frame header to dst with a zero length
// placeholder and returns the extended slice. Append the body, then call
// FinishFrame with the offset at which the frame started (len(dst) before the
// call).
func BeginRequest(dst []byte, h RequestHeader) []byte {
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Key))
	dst = binary.BigEndian.AppendUint16(dst, uint16(h.Version))
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.RequestID))
	return dst
}

// FinishFrame writes the length prefix of the frame that starts at
// buf[start:] and runs to the end of buf. It fails when the frame does not fit
// an int32 length.
func FinishFrame(buf []byte, start int) error {
	if start < 0 || len(buf)-start < LengthSize {
		return fmt.Errorf("wire: FinishFrame: no frame at offset %d", start)
	}
	n := len(buf) - start - LengthSize
	if n > math.MaxInt32 {
		return fmt.Errorf("wire: frame of %d bytes exceeds the int32 length field", n)
	}
	binary.BigEndian.PutUint32(buf[start:], uint32(n))
	return nil
}

// AppendRequest appends a complete request frame (length prefix, header, body).
func AppendRequest(dst []byte, h RequestHeader, body []byte) []byte {
	start := len(dst)
	dst = BeginRequest(dst, h)
	dst = append(dst, body...)
	if err := FinishFrame(dst, start); err != nil {
		panic(err) // only for bodies above 2 GiB, which cannot be sent anyway
	}
	return dst
}

// DecodeRequest splits a request frame payload (the bytes after the length
// prefix) into header and body. The body aliases payload.
func DecodeRequest(payload []byte) (RequestHeader, []byte, error) {
	if len(payload) < RequestHeaderSize {
		return RequestHeader{}, nil, fmt.Errorf("%w: request of %d bytes is shorter than its %d-byte header",
			ErrMalformed, len(payload), RequestHeaderSize)
	}
	h := RequestHeader{
		Key:       APIKey(binary.BigEndian.Uint16(payload[0:])),
		Version:   int16(binary.BigEndian.Uint16(payload[2:])),
		RequestID: int32(binary.BigEndian.Uint32(payload[4:])),
	}
	return h, payload[RequestHeaderSize:], nil
}

// Response is a decoded response frame. RequestID is meaningless for
// ResponseServerFailure. Body aliases the decoded payload: the API's response
// message for ResponseSuccess, an ErrorResponse otherwise.
type Response struct {
	Type      ResponseType
	RequestID int32
	Body      []byte
}

// DecodeResponse decodes a response frame payload (the bytes after the length
// prefix). An unknown type byte or a payload shorter than its header is
// ErrMalformed.
func DecodeResponse(payload []byte) (Response, error) {
	if len(payload) < ServerFailureHeaderSize {
		return Response{}, fmt.Errorf("%w: empty response frame", ErrMalformed)
	}
	t := ResponseType(int8(payload[0]))
	switch t {
	case ResponseSuccess, ResponseError:
		if len(payload) < ResponseHeaderSize {
			return Response{}, fmt.Errorf("%w: %s of %d bytes is shorter than its %d-byte header",
				ErrMalformed, t, len(payload), ResponseHeaderSize)
		}
		return Response{
			Type:      t,
			RequestID: int32(binary.BigEndian.Uint32(payload[1:])),
			Body:      payload[ResponseHeaderSize:],
		}, nil
	case ResponseServerFailure:
		return Response{Type: t, Body: payload[ServerFailureHeaderSize:]}, nil
	default:
		return Response{}, fmt.Errorf("%w: unknown response type %d", ErrMalformed, payload[0])
	}
}

// AppendResponse appends a complete response frame. For ResponseServerFailure
// the request id is not written.
func AppendResponse(dst []byte, t ResponseType, requestID int32, body []byte) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = append(dst, byte(t))
	if t != ResponseServerFailure {
		dst = binary.BigEndian.AppendUint32(dst, uint32(requestID))
	}
	dst = append(dst, body...)
	if err := FinishFrame(dst, start); err != nil {
		panic(err)
	}
	return dst
}

// ReadFrame reads one length-prefixed frame from r and returns its payload
// (the bytes after the prefix) in a newly allocated slice. A prefix that is
// negative or makes the whole frame larger than maxFrame bytes (prefix
// included; <= 0 means DefaultMaxResponseFrameSize) fails with
// ErrFrameTooLarge or ErrMalformed without reading further. io.EOF is returned
// only when r ends cleanly before a frame starts; a frame cut short gives
// io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, maxFrame int) ([]byte, error) {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxResponseFrameSize
	}
	var prefix [LengthSize]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(prefix[:]))
	if n < 0 {
		return nil, fmt.Errorf("%w: negative frame length %d", ErrMalformed, n)
	}
	if int64(n)+LengthSize > int64(maxFrame) {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrFrameTooLarge, int64(n)+LengthSize, maxFrame)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return payload, nil
}
