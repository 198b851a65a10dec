package meta

import (
	"context"

	"google.golang.org/protobuf/proto"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/rpc"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
)

// RPCCaller is the Caller over an *rpc.Client: GetMetadata goes through
// Client.Metadata (which also refreshes the client's node list), other ToAny
// calls to a random tablet server, ToCoordinator to the coordinator and
// ToNode to the tablet server with that id.
type RPCCaller struct {
	Client *rpc.Client
}

var _ Caller = RPCCaller{}

// Call implements Caller.
func (r RPCCaller) Call(ctx context.Context, to Dest, key wire.APIKey, req, resp proto.Message) error {
	if to.Kind == ToNode {
		if f := WrittenFunc(ctx); f != nil {
			ctx = rpc.WithWritten(context.WithValue(ctx, writtenKey{}, nil), f)
		}
		return r.Client.CallTabletServerLane(ctx, to.Node, to.Lane, key, req, resp)
	}
	if f := WrittenFunc(ctx); f != nil {
		defer f() // no finer signal for these: when the call returns
		ctx = context.WithValue(ctx, writtenKey{}, nil)
	}
	switch to.Kind {
	case ToCoordinator:
		return r.Client.CallCoordinator(ctx, key, req, resp)
	default:
		if key == wire.KeyGetMetadata {
			if mreq, ok := req.(*flusspb.MetadataRequest); ok {
				got, err := r.Client.Metadata(ctx, mreq)
				if err != nil {
					return err
				}
				proto.Reset(resp)
				proto.Merge(resp, got)
				return nil
			}
		}
		return r.Client.CallAnyTabletServer(ctx, key, req, resp)
	}
}
