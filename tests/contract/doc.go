// Package contract holds one behavioural suite per outbound port of package
// domain: RunCatalog for domain.Catalog, RunRowWriter for domain.RowWriter and
// RunLookup for domain.Lookup. Every adapter of a port runs the same suite:
//
//   - the memory adapter (adapters/memory, catalog only) in its unit tests;
//   - the Fluss adapter (adapters/fluss) over the protocol fake
//     adapters/fluss/flussfake in its unit tests;
//   - the Fluss adapter over a real Fluss 0.9.1 cluster in tests/integration
//     (build tag integration).
//
// The real cluster is the reference: where a fake answers differently, the
// fake is fixed. The suites therefore assert only what the real server does
// and every adapter must honour (kinds, resources and codes of *domain.Error,
// ignore-if flags, cascade, per-entry write outcomes, lookup results in input
// order); adapter-specific details (request bytes, clocks, injected faults)
// stay in the adapters' own tests.
//
// A suite never assumes it owns the cluster: every scenario works in a
// database of its own with a random name and drops it at the end, so the
// suites can run against a shared cluster and in parallel.
package contract
