package telemetry

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// MaxBackendLinks bounds the links of one backend span (the SDK's default
// link limit). Links beyond it are dropped and counted in fluss.links.dropped.
const MaxBackendLinks = 128

// StartBackendSpan starts the client span of one Fluss request to one
// server (a PutKv, ProduceLog or Lookup per tablet server), named
// `fluss.<Api>`: api may be the wire name (PUT_KV) or the span spelling
// (PutKv). links are the span contexts of the REST request spans whose rows
// the request carries: invalid ones are skipped, duplicates removed, and at
// most MaxBackendLinks kept. The span is a child of ctx's span if any (the
// writer's sender usually runs without one, so the span starts a trace of its
// own and the links tie it to the requests). Pass the returned context to the
// rpc call: FlussHooks then annotates this span (API version, frame sizes,
// server address) instead of starting another one. End it with
// EndBackendSpan.
func (in *Instrumentation) StartBackendSpan(ctx context.Context, api string, links []trace.SpanContext, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	name := SpanName(api)
	kept, dropped := dedupeLinks(links)
	opts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(SpanAttrAPI.String(wireName(api))),
		trace.WithAttributes(attrs...),
		trace.WithLinks(kept...),
	}
	if dropped > 0 {
		opts = append(opts, trace.WithAttributes(SpanAttrLinksDropped.Int(dropped)))
	}
	ctx, span := in.tracer.Start(ctx, name, opts...)
	return context.WithValue(ctx, backendSpanKey{}, &backendSpan{name: name, span: span}), span
}

// EndBackendSpan sets the outcome of a backend span and ends it. errorCode is
// the Fluss error code of the request (or of its first failed bucket), 0 for
// none; failedBuckets counts the buckets answered with an error. A non-zero
// code or a non-nil err marks the span as failed.
func EndBackendSpan(span trace.Span, errorCode int32, failedBuckets int, err error) {
	finishSpan(span, errorCode, failedBuckets, err)
	span.End()
}

func finishSpan(span trace.Span, errorCode int32, failedBuckets int, err error) {
	if errorCode != 0 {
		span.SetAttributes(SpanAttrErrorCode.Int(int(errorCode)))
	}
	if failedBuckets > 0 {
		span.SetAttributes(SpanAttrFailed.Int(failedBuckets))
	}
	switch {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	case errorCode != 0:
		span.SetStatus(codes.Error, "fluss error code "+strconv.Itoa(int(errorCode)))
	case failedBuckets > 0:
		span.SetStatus(codes.Error, strconv.Itoa(failedBuckets)+" buckets failed")
	}
}

// backendSpan marks a context as carrying the span of one Fluss request.
type backendSpan struct {
	name string
	span trace.Span
}

type backendSpanKey struct{}

func backendSpanFrom(ctx context.Context) *backendSpan {
	bs, _ := ctx.Value(backendSpanKey{}).(*backendSpan)
	return bs
}

func dedupeLinks(scs []trace.SpanContext) ([]trace.Link, int) {
	if len(scs) == 0 {
		return nil, 0
	}
	type id struct {
		t trace.TraceID
		s trace.SpanID
	}
	seen := make(map[id]struct{}, len(scs))
	links := make([]trace.Link, 0, min(len(scs), MaxBackendLinks))
	dropped := 0
	for _, sc := range scs {
		if !sc.IsValid() {
			continue
		}
		k := id{sc.TraceID(), sc.SpanID()}
		if _, dup := seen[k]; dup {
			continue
		}
		seen[k] = struct{}{}
		if len(links) == MaxBackendLinks {
			dropped++
			continue
		}
		links = append(links, trace.Link{SpanContext: sc})
	}
	return links, dropped
}

var spanNames sync.Map // api string -> span name

// SpanName is the name of the span of a Fluss request: "fluss." followed by
// the API in CamelCase (PUT_KV and PutKv both give fluss.PutKv).
func SpanName(api string) string {
	if v, ok := spanNames.Load(api); ok {
		return v.(string)
	}
	name := "fluss." + camel(api)
	spanNames.Store(api, name)
	return name
}

// camel turns PUT_KV into PutKv; a name that is not upper snake case is kept.
func camel(api string) string {
	if api != strings.ToUpper(api) {
		return api
	}
	var b strings.Builder
	for _, part := range strings.Split(api, "_") {
		if part == "" {
			continue
		}
		b.WriteString(part[:1])
		b.WriteString(strings.ToLower(part[1:]))
	}
	return b.String()
}

// wireName turns PutKv into PUT_KV; an upper snake case name is kept.
func wireName(api string) string {
	if api == strings.ToUpper(api) {
		return api
	}
	var b strings.Builder
	for i, r := range api {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}
