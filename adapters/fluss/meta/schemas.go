package meta

// This file holds the schema cache: older schemas of a table by schema id
// (GetTableSchema), for rows written under them.

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/serde"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/wire"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Schema returns the schema with schemaID of table t: the cached current one,
// or an older one fetched with GetTableSchema and cached.
func (c *Cache) Schema(ctx context.Context, t *Table, schemaID int32) (domain.Schema, error) {
	if schemaID == t.Info.SchemaID {
		return t.Info.Descriptor.Schema, nil
	}
	c.mu.Lock()
	if e, ok := c.byID[t.ID()]; ok {
		if s, ok := e.schemas[schemaID]; ok {
			c.mu.Unlock()
			return s, nil
		}
	}
	c.mu.Unlock()
	what := fmt.Sprintf("schema %d of table `%s`", schemaID, t.Path())
	var out domain.Schema
	err := c.do(ctx, fmt.Sprintf("s:%d/%d", t.ID(), schemaID), func(ctx context.Context) error {
		var resp flusspb.GetTableSchemaResponse
		req := &flusspb.GetTableSchemaRequest{TablePath: pbPath(t.Path()), SchemaId: proto.Int32(schemaID)}
		if err := c.call.Call(ctx, Any(), wire.KeyGetTableSchema, req, &resp); err != nil {
			return DomainError(err, what)
		}
		s, err := serde.UnmarshalSchemaJSON(resp.GetSchemaJson())
		if err != nil {
			return &domain.Error{Kind: domain.KindBackend, Message: what + ": " + err.Error(), Cause: err}
		}
		c.mu.Lock()
		if e, ok := c.byID[t.ID()]; ok {
			e.schemas[schemaID] = s
		}
		c.mu.Unlock()
		return nil
	})
	if err != nil {
		return out, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byID[t.ID()]; ok {
		if s, ok := e.schemas[schemaID]; ok {
			return s, nil
		}
	}
	return out, &domain.Error{Kind: domain.KindUnavailable, Retryable: true, Message: what + ": evicted while loading; retry"}
}
