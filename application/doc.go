// Package application holds the gateway's use cases. They are thin: resolve
// the caller's session on a cluster through domain.Clusters, validate names
// and descriptors, call the domain.Catalog port, and paginate listings. They
// return *domain.Error values (or context errors) for every failure and know
// nothing about HTTP.
//
// RecordService holds the data-plane use cases (writes, primary-key and
// prefix lookups): it caches table definitions briefly (Table), has the
// inbound adapter decode request bodies against them through the
// WriteDecoder, KeyDecoder and PrefixDecoder interfaces, bounds delivery by
// a deadline that leaves time to answer, and assembles per-entry verdicts.
// Request admission (concurrency and rate budgets) belongs to the HTTP
// adapter (adapters/http limits.go), its only user.
package application
