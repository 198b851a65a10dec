package meta

// This file holds the node cache: the coordinator and tablet servers of
// the last metadata answer.

import (
	"context"
	"net"
	"strconv"

	flusspb "github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/proto"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// ServerNode is one server of the cluster as metadata lists it.
type ServerNode struct {
	ID   int32
	Host string
	Port int32
	Rack string
}

// Addr is host:port.
func (n ServerNode) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(int(n.Port))) }

// RefreshNodes fetches the node list (an empty MetadataRequest).
func (c *Cache) RefreshNodes(ctx context.Context) error {
	return c.do(ctx, "n:", func(ctx context.Context) error {
		return c.fetch(ctx, &flusspb.MetadataRequest{}, domain.TablePath{})
	})
}

// Node returns the address of a node by id (tablet servers and coordinator).
func (c *Cache) Node(id int32) (ServerNode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.nodes[id]; ok {
		return n, true
	}
	if c.coordinator != nil && c.coordinator.ID == id {
		return *c.coordinator, true
	}
	return ServerNode{}, false
}

// Coordinator returns the coordinator node, if metadata named one.
func (c *Cache) Coordinator() (ServerNode, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.coordinator == nil {
		return ServerNode{}, false
	}
	return *c.coordinator, true
}

// TabletServers returns the live tablet servers from the last metadata answer.
func (c *Cache) TabletServers() []ServerNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ServerNode, 0, len(c.nodes))
	for _, n := range c.nodes {
		out = append(out, n)
	}
	return out
}
