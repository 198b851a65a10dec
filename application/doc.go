// Package application holds the gateway's use cases. They are thin: resolve
// the caller's session on a cluster through domain.Clusters, validate names
// and descriptors, call the domain.Catalog port, and paginate listings. They
// return *domain.Error values (or context errors) for every failure and know
// nothing about HTTP.
package application
