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
	if f := WrittenFunc(ctx); f != nil {
		ctx = rpc.WithWritten(ctx, f)
	}
	switch to.Kind {
	case ToCoordinator:
		return r.Client.CallCoordinator(ctx, key, req, resp)
	case ToNode:
		if to.Lane > 0 {
			return r.Client.CallTabletServerLane(ctx, to.Node, to.Lane, key, req, resp)
		}
		return r.Client.CallTabletServer(ctx, to.Node, key, req, resp)
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
