package application

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// cursorKind is the sealed.Sealer kind of scan cursors.
const cursorKind = "scan-cursor"

// cursorVersion is the first byte of a cursor's payload.
const cursorVersion = 1

// scanCursor is what a scan cursor carries: the identity it is bound to
// (cluster, principal, table path and id, projection, partition and bucket
// selection) and the next offset of every bucket read so far. It is sealed
// with the gateway's token key (internal/sealed: HMAC-SHA-256), so its
// content cannot be altered, and opened by any replica sharing that key:
// nothing is kept between requests.
//
// Payload (all integers varints, strings length-prefixed):
//
//	version(1) cluster principal actAs database table tableID
//	#columns column... allPartitions(0|1) #partitions partition...
//	#buckets bucket... #positions (partitionID bucket offset)...
type scanCursor struct {
	Cluster, Principal, ActAs string
	Path                      domain.TablePath
	TableID                   int64
	Columns                   []string // nil: every column
	AllPartitions             bool     // partitions left out: every partition, including later ones
	Partitions                []string
	Buckets                   []int32 // nil: all
	Positions                 []cursorPosition
}

type cursorPosition struct {
	PartitionID int64
	Bucket      int32
	Offset      int64
}

// maxCursorBytes bounds the payload a cursor may decode to, and so the work
// of opening one.
const maxCursorBytes = 1 << 20

func (c *scanCursor) marshal() []byte {
	b := []byte{cursorVersion}
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(c.Cluster)
	str(c.Principal)
	str(c.ActAs)
	str(c.Path.Database)
	str(c.Path.Table)
	b = binary.AppendVarint(b, c.TableID)
	if c.Columns == nil {
		b = binary.AppendVarint(b, -1)
	} else {
		b = binary.AppendVarint(b, int64(len(c.Columns)))
		for _, s := range c.Columns {
			str(s)
		}
	}
	if c.AllPartitions {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(c.Partitions)))
	for _, s := range c.Partitions {
		str(s)
	}
	if c.Buckets == nil {
		b = binary.AppendVarint(b, -1)
	} else {
		b = binary.AppendVarint(b, int64(len(c.Buckets)))
		for _, x := range c.Buckets {
			b = binary.AppendVarint(b, int64(x))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(c.Positions)))
	for _, p := range c.Positions {
		b = binary.AppendVarint(b, p.PartitionID)
		b = binary.AppendVarint(b, int64(p.Bucket))
		b = binary.AppendVarint(b, p.Offset)
	}
	return b
}

var errCursorPayload = errors.New("malformed cursor payload")

type cursorReader struct {
	b   []byte
	err error
}

func (r *cursorReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errCursorPayload
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *cursorReader) count() int {
	v := r.varint()
	if v < -1 || v > int64(len(r.b)) { // every element takes at least one byte
		r.err = errCursorPayload
		return 0
	}
	return int(v)
}

func (r *cursorReader) str() string {
	if r.err != nil {
		return ""
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.err = errCursorPayload
		return ""
	}
	s := string(r.b[k : k+int(n)])
	r.b = r.b[k+int(n):]
	return s
}

func (r *cursorReader) ucount() int {
	if r.err != nil {
		return 0
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.err = errCursorPayload
		return 0
	}
	r.b = r.b[k:]
	return int(n)
}

func (r *cursorReader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.err = errCursorPayload
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// unmarshalCursor decodes a payload marshal produced; it runs in time and
// memory linear in len(b).
func unmarshalCursor(b []byte) (*scanCursor, error) {
	if len(b) == 0 || len(b) > maxCursorBytes || b[0] != cursorVersion {
		return nil, errCursorPayload
	}
	r := &cursorReader{b: b[1:]}
	c := &scanCursor{}
	c.Cluster, c.Principal, c.ActAs = r.str(), r.str(), r.str()
	c.Path.Database, c.Path.Table = r.str(), r.str()
	c.TableID = r.varint()
	if n := r.count(); n >= 0 && r.err == nil {
		c.Columns = make([]string, 0, n)
		for range n {
			c.Columns = append(c.Columns, r.str())
		}
	}
	switch r.byte() {
	case 0:
	case 1:
		c.AllPartitions = true
	default:
		r.err = errCursorPayload
	}
	n := r.ucount()
	for i := 0; i < n && r.err == nil; i++ {
		c.Partitions = append(c.Partitions, r.str())
	}
	if n := r.count(); n >= 0 && r.err == nil {
		c.Buckets = make([]int32, 0, n)
		for range n {
			c.Buckets = append(c.Buckets, int32(r.varint()))
		}
	}
	n = r.ucount()
	for i := 0; i < n && r.err == nil; i++ {
		c.Positions = append(c.Positions, cursorPosition{PartitionID: r.varint(), Bucket: int32(r.varint()), Offset: r.varint()})
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errCursorPayload
	}
	if r.err != nil {
		return nil, r.err
	}
	return c, nil
}

// sealCursor seals c.
func sealCursor(s *sealed.Sealer, c *scanCursor) string {
	return s.Seal(cursorKind, "", c.marshal())
}

// openCursor opens a cursor and checks that it belongs to this request:
// every refusal is a 400 invalid_argument naming why.
func openCursor(s *sealed.Sealer, token string, scope Scope, path domain.TablePath) (*scanCursor, error) {
	const field = "cursor"
	if len(token) > maxCursorBytes*4/3+64 {
		return nil, domain.InvalidArgument("%s: %d characters, more than any cursor this gateway issues", field, len(token))
	}
	payload, err := s.Open(cursorKind, "", token)
	if err != nil {
		return nil, domain.InvalidArgument("%s: not a cursor issued by this gateway, or altered (%s); "+
			"replicas must share gateway.security.token-key", field, err)
	}
	c, err := unmarshalCursor(payload)
	if err != nil {
		return nil, domain.InvalidArgument("%s: %s", field, err)
	}
	switch {
	case c.Cluster != scope.Cluster:
		return nil, domain.InvalidArgument("%s: issued for another cluster, not `%s`", field, scope.Cluster)
	case c.Path != path:
		return nil, domain.InvalidArgument("%s: issued for another table, not `%s`", field, path)
	case c.Principal != scope.Principal.Name || c.ActAs != scope.Principal.ActAs:
		return nil, domain.InvalidArgument("%s: issued to another principal", field)
	}
	return c, nil
}

// sameColumns compares two projections (nil: every column).
func sameColumns(a, b []string) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}
