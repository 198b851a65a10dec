package meta

import (
	"context"
	"errors"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
)

// DestKind selects the server a call goes to.
type DestKind uint8

// Destinations. DDL goes to the coordinator, metadata and writer-id requests
// to any server, data requests to the leader of the bucket.
const (
	// ToAny is any live server, preferably a tablet server (GetMetadata,
	// GetTableInfo, GetTableSchema, InitWriter).
	ToAny DestKind = iota + 1
	// ToCoordinator is the coordinator (CreatePartition).
	ToCoordinator
	// ToNode is the server with id Node (PutKv, ProduceLog to a bucket leader).
	ToNode
)

// Dest is the destination of one call. Addr is filled in for ToNode when the
// cache knows the node's address, so that a Caller that pools connections by
// address needs no node table of its own.
type Dest struct {
	Kind DestKind
	Node int32
	Addr string
	// Lane selects one of several connections to a ToNode server (0: the
	// shared one); requests of one lane keep their order on the server.
	Lane int
}

// Any is the destination "any live tablet server".
func Any() Dest { return Dest{Kind: ToAny} }

// Coordinator is the destination "the coordinator leader".
func Coordinator() Dest { return Dest{Kind: ToCoordinator} }

// Node is the destination "the tablet server with this id".
func Node(id int32) Dest { return Dest{Kind: ToNode, Node: id} }

// Caller sends one request and decodes its answer into resp. It is the seam
// between the metadata cache and writer on one side and the connection layer
// (package rpc) on the other; tests implement it with fakes.
//
// Errors should satisfy Classified (every rpc error does); an error that does
// not is treated as a connection-level failure whose outcome is unknown.
type Caller interface {
	Call(ctx context.Context, to Dest, key wire.APIKey, req, resp proto.Message) error
}

// Classified is the error classification of package rpc (rpc.Classified),
// declared here with standard types only so that fakes can implement it.
type Classified interface {
	error
	NotSent() bool
	Ambiguous() bool
	Retriable() bool
	FlussErrorCode() int32
}

// ErrorCode returns the Fluss error code carried by err (0 when none).
func ErrorCode(err error) wire.ErrorCode {
	// Fluss 0.9.1 answers some failures (a missing table in GetMetadata) with
	// UNKNOWN_SERVER_ERROR wrapping the real exception; recover its code.
	var se *wire.ServerError
	if errors.As(err, &se) {
		return se.EffectiveCode()
	}
	var c Classified
	if errors.As(err, &c) {
		return wire.ErrorCode(c.FlussErrorCode())
	}
	return wire.CodeNone
}

// NotSent reports whether err says the server cannot have seen the request.
func NotSent(err error) bool {
	var c Classified
	return errors.As(err, &c) && c.NotSent()
}

// Answered reports whether the server answered the request with an error
// (neither not-sent nor ambiguous).
func Answered(err error) bool {
	var c Classified
	return errors.As(err, &c) && !c.NotSent() && !c.Ambiguous()
}

// Retriable reports whether the same request may succeed later.
func Retriable(err error) bool {
	var c Classified
	if errors.As(err, &c) {
		return c.Retriable()
	}
	return false
}

type writtenKey struct{}

// WithWritten returns a context whose Call runs f once as soon as the
// request has been written to its connection (or will never be): a caller
// keeping pipelined requests of one Dest lane in order starts the next one
// only then. A Caller that cannot tell runs it when Call returns at the
// latest (the caller must not rely on more).
func WithWritten(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, writtenKey{}, f)
}

// WrittenFunc returns the function WithWritten put in ctx, or nil.
func WrittenFunc(ctx context.Context) func() {
	f, _ := ctx.Value(writtenKey{}).(func())
	return f
}
