// Package rpc is the connection layer of the Fluss client: it dials Fluss
// servers, runs the connection handshake, pipelines requests and routes them
// through a cluster.
//
// # Connections
//
// Dial opens one Conn: TCP connect, ApiVersions (request id 0, with an
// optional server-type check), then SASL/PLAIN Authenticate when configured.
// Conn.Call sends a request with version min(client max, server max) for its
// API (see wire.ClientVersions), and refuses APIs the server did not list:
// Fluss answers those with silence. Requests from many goroutines are
// pipelined on the socket and matched to responses by request id, in any
// order. A reader goroutine owns the socket's read side; each request has a
// timeout (ConnConfig.RequestTimeout, 30 s by default), because Fluss drops
// requests it cannot parse without answering. A SERVER_FAILURE frame or an
// I/O error fails every request in flight and ends the connection.
//
// # Errors
//
// Every error is an *Error, which says whether the request may have reached
// the server (Outcome: NotSent, Ambiguous, Answered), carries the Fluss error
// code and whether a retry may help. Callers outside this package use the
// Classified interface, which has only standard types in its method set.
// A request that failed before a complete frame was written is NotSent and
// always safe to repeat.
//
// # Client
//
// Client manages a cluster: bootstrap addresses, metadata discovery
// (GetMetadata: coordinator and alive tablet servers), one lazily dialed
// connection per server (re-dialed after failure), and helpers that send to
// the coordinator, to any tablet server or to a given tablet server.
// Leader routing of data requests is left to the callers (bucket metadata
// comes from Client.Metadata).
//
// Sources: apache/fluss at v0.9.1-incubating, fluss-rpc/src/main/java/org/
// apache/fluss/rpc/netty/client/{ServerConnection,NettyClientHandler,
// ServerApiVersions}.java and rpc/netty/server/NettyServerHandler.java;
// docs/fluss-rpc.md (Framing, Connection start, Routing and leader discovery).
package rpc
