package domain

import "context"

// Session is the set of ports bound to one cluster for one principal. In
// service identity mode every principal shares one connection per cluster; in
// user mode a session is backed by a connection of that principal.
type Session interface {
	Catalog() Catalog
	Writer() RowWriter
	Lookup() Lookup
}

// Clusters resolves a cluster id (the `{cluster}` path segment) to a session.
// It fails with a KindNotFound/ResourceCluster error for an unknown id, and
// with KindUnavailable when the cluster cannot be reached.
type Clusters interface {
	Names() []string
	Session(ctx context.Context, cluster string, p Principal) (Session, error)
}
