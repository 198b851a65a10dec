package memory

import (
	"context"
	"slices"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Cluster is one in-memory cluster: a Catalog shared by every principal. Its
// write and lookup ports answer KindUnsupported, since the memory backend
// models catalog metadata only.
type Cluster struct {
	catalog *Catalog
}

// NewCluster returns a cluster over a new Catalog built with opts.
func NewCluster(opts ...Option) *Cluster {
	return &Cluster{catalog: NewCatalog(opts...)}
}

// Catalog returns the cluster's catalog, for tests that seed or inspect state
// or install a Hook.
func (c *Cluster) Catalog() *Catalog { return c.catalog }

// Session returns a session over the shared catalog; the principal is not
// checked, as the memory backend has no authorization.
func (c *Cluster) Session(ctx context.Context, _ domain.Principal) (domain.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return session{catalog: c.catalog}, nil
}

// Close releases nothing; it exists so a Cluster fits where a closable cluster
// backend is expected.
func (c *Cluster) Close(context.Context) error { return nil }

type session struct {
	catalog *Catalog
}

// Catalog returns the cluster's shared catalog.
func (s session) Catalog() domain.Catalog { return s.catalog }

// Writer returns a writer that refuses every batch.
func (s session) Writer() domain.RowWriter { return unsupported{} }

// Lookup returns a lookup port that refuses every request.
func (s session) Lookup() domain.Lookup { return unsupported{} }

type unsupported struct{}

// Write refuses: the memory backend stores no rows.
func (unsupported) Write(context.Context, *domain.WriteBatch) ([]domain.EntryResult, error) {
	return nil, errUnsupported("writes")
}

// Lookup refuses: the memory backend stores no rows.
func (unsupported) Lookup(context.Context, *domain.LookupRequest) (*domain.LookupResponse, error) {
	return nil, errUnsupported("lookups")
}

// PrefixLookup refuses: the memory backend stores no rows.
func (unsupported) PrefixLookup(context.Context, *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
	return nil, errUnsupported("prefix lookups")
}

func errUnsupported(what string) *domain.Error {
	return domain.Errorf(domain.KindUnsupported, "the memory cluster backend does not support %s", what)
}

// Clusters is an in-memory domain.Clusters over named Cluster values.
type Clusters struct {
	names []string
	byID  map[string]*Cluster
}

var _ domain.Clusters = (*Clusters)(nil)

// NewClusters returns a registry with one fresh Cluster per id, keeping the
// given order for Names.
func NewClusters(ids ...string) *Clusters {
	c := &Clusters{byID: make(map[string]*Cluster, len(ids))}
	for _, id := range ids {
		if _, dup := c.byID[id]; dup {
			continue
		}
		c.names = append(c.names, id)
		c.byID[id] = NewCluster()
	}
	return c
}

// Cluster returns the cluster with the given id, or nil.
func (c *Clusters) Cluster(id string) *Cluster { return c.byID[id] }

// Names returns the cluster ids in registration order.
func (c *Clusters) Names() []string { return slices.Clone(c.names) }

// Session resolves a cluster id; an unknown id is a cluster_not_found error.
func (c *Clusters) Session(ctx context.Context, cluster string, p domain.Principal) (domain.Session, error) {
	cl, ok := c.byID[cluster]
	if !ok {
		return nil, domain.NotFound(domain.ResourceCluster, "cluster `%s` is not configured", cluster)
	}
	return cl.Session(ctx, p)
}
