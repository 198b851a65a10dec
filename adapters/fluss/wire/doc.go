// Package wire is the byte-level layer of the Apache Fluss RPC protocol:
// frame headers (big-endian length prefix, request header, the three response
// types), API keys with the versions this client implements, and the table of
// Fluss error codes with their retry and metadata-refresh semantics.
//
// Message bodies are standard proto2; their Go types are generated into
// package flusspb (adapters/fluss/proto). This package knows nothing about
// connections; see package rpc.
//
// Sources: apache/fluss at tag v0.9.1-incubating, fluss-rpc/src/main/java/org/
// apache/fluss/rpc/protocol/{MessageCodec,ResponseType,ApiKeys,Errors}.java,
// summarised in docs/fluss-rpc.md (Framing, Message bodies, Error codes).
package wire
