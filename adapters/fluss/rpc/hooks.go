package rpc

import (
	"context"
	"time"
)

// Hooks are optional observers registered in Config.Hooks (or
// ConnConfig.Hooks). A hook value may implement any subset of the interfaces
// below; the others are skipped. The method sets use only standard types so a
// telemetry adapter can implement them without importing this package.
// Hooks run synchronously on the request's goroutine (connect hooks on the
// dialing goroutine, disconnect hooks on the goroutine that noticed the
// failure) and must not block.

// ConnectHook observes every dial, including the ApiVersions and Authenticate
// handshake. err is nil on success.
type ConnectHook interface {
	OnFlussConnect(addr string, elapsed time.Duration, err error)
}

// DisconnectHook observes the end of a connection that had been established.
// err is the reason (nil when the owner closed it).
type DisconnectHook interface {
	OnFlussDisconnect(addr string, err error)
}

// RequestHook observes every completed request (including failed ones) on an
// established connection. api is the Fluss API name (for example "PUT_KV"),
// requestBytes and responseBytes are frame sizes including the length prefix
// (0 when nothing was written or read), elapsed runs from the call to its
// return. ctx is the caller's context, so a tracer can find the parent span.
type RequestHook interface {
	OnFlussRequest(ctx context.Context, addr, api string, version int16, requestBytes, responseBytes int, elapsed time.Duration, err error)
}

type hooks []any

func (h hooks) connect(addr string, elapsed time.Duration, err error) {
	for _, x := range h {
		if c, ok := x.(ConnectHook); ok {
			c.OnFlussConnect(addr, elapsed, err)
		}
	}
}

func (h hooks) disconnect(addr string, err error) {
	for _, x := range h {
		if c, ok := x.(DisconnectHook); ok {
			c.OnFlussDisconnect(addr, err)
		}
	}
}

func (h hooks) request(ctx context.Context, addr, api string, version int16, reqBytes, respBytes int, elapsed time.Duration, err error) {
	for _, x := range h {
		if c, ok := x.(RequestHook); ok {
			c.OnFlussRequest(ctx, addr, api, version, reqBytes, respBytes, elapsed, err)
		}
	}
}
