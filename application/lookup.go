package application

// This file holds the primary-key lookup use case (RecordService.Lookup).

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// KeyDecoder turns a lookup request's body into primary keys.
type KeyDecoder interface {
	// Size is the encoded size of the request, checked against
	// RecordLimits.LookupMaxKeyBytes before decoding.
	Size() int
	// DecodeKeys decodes the keys against t, one Datum per primary-key
	// column in primary-key order; more than maxKeys is KindLimitExceeded.
	DecodeKeys(t *Table, maxKeys int) ([][]domain.Datum, error)
}

// LookupResult is the outcome of a primary-key lookup.
type LookupResult struct {
	// Table is the definition rows are rendered with; its schema id is the
	// response's.
	Table    *Table
	Response *domain.LookupResponse
}

// Lookup looks up rows by primary key. Keys are decoded against the table's
// schema first; any invalid key fails the whole request naming its index
// and column.
func (s *RecordService) Lookup(ctx context.Context, scope Scope, path domain.TablePath, dec KeyDecoder) (LookupResult, error) {
	start := s.now()
	res, err := s.uc.lookup(ctx, scope, path, dec)
	err = s.explainNotFound(ctx, scope, path, err)
	return res, explainTimeout(ctx, start, err, "a lookup writes nothing")
}

func (s *RecordService) lookup(ctx context.Context, scope Scope, path domain.TablePath, dec KeyDecoder) (LookupResult, error) {
	if err := validatePath(path, false); err != nil {
		return LookupResult{}, err
	}
	if err := s.checkKeyBytes(dec.Size(), "lookup"); err != nil {
		return LookupResult{}, err
	}
	session, err := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if err != nil {
		return LookupResult{}, err
	}
	port := session.Lookup()
	if port == nil {
		return LookupResult{}, unsupported(scope.Cluster, "lookups")
	}
	key := keyOf(scope, path)
	decode := func(t *Table) (*domain.LookupRequest, []string, error) {
		if len(t.Info.Descriptor.Schema.PrimaryKey) == 0 {
			return nil, nil, domain.InvalidArgument("table `%s` has no primary key; lookups need a primary-key table", path)
		}
		keys, err := dec.DecodeKeys(t, s.limits.LookupMaxKeys)
		if err != nil {
			return nil, nil, err
		}
		if len(keys) > s.limits.LookupMaxKeys {
			return nil, nil, &domain.Error{Kind: domain.KindLimitExceeded,
				Message: fmt.Sprintf("keys: %d keys exceed the limit of %d", len(keys), s.limits.LookupMaxKeys)}
		}
		if err := checkKeyPartitions(t.Info, t.Info.Descriptor.Schema.PrimaryKey, keys, "keys"); err != nil {
			return nil, nil, err
		}
		return &domain.LookupRequest{Table: path, TableID: t.Info.TableID, SchemaID: t.Info.SchemaID, Keys: keys}, nil, nil
	}
	def := s.definition(key, session)
	run := func(t *Table, req *domain.LookupRequest) (LookupResult, error) {
		// Each distinct key is fetched once: 128 copies of one key cost one
		// row from the cluster, answered 128 times.
		uniq, index := collapseKeys(req.Keys)
		sent := req
		if len(uniq) < len(req.Keys) {
			r := *req
			r.Keys = uniq
			sent = &r
		}
		resp, err := port.Lookup(ctx, sent)
		if err != nil {
			return LookupResult{}, err
		}
		if resp == nil || len(resp.Results) != len(sent.Keys) {
			return LookupResult{}, domain.Errorf(domain.KindInternal, "lookup returned a response that does not match its %d keys", len(sent.Keys))
		}
		if sent != req {
			results := make([]domain.LookupResult, len(req.Keys))
			for i, j := range index {
				results[i] = resp.Results[j]
			}
			resp = &domain.LookupResponse{SchemaID: resp.SchemaID, Results: results}
		}
		rt, err := renderTable(ctx, def, t, resp.SchemaID)
		return LookupResult{Table: rt, Response: resp}, err
	}
	_, _, res, err := withDefinition(ctx, def, s.refetch, s.now, decode, run)
	return res, err
}

// collapseKeys returns the distinct keys of keys in first-seen order and,
// for each key, the position of its copy among them (nil when all are
// distinct). Keys are compared datum by datum (null flag, integer, nanos,
// float bits, bytes).
func collapseKeys(keys [][]domain.Datum) (uniq [][]domain.Datum, index []int) {
	if len(keys) < 2 {
		return keys, nil
	}
	seen := make(map[string]int, len(keys))
	index = make([]int, len(keys))
	var b []byte
	for i, k := range keys {
		b = appendKeyIdentity(b[:0], k)
		j, ok := seen[string(b)]
		if !ok {
			j = len(uniq)
			seen[string(b)] = j
			uniq = append(uniq, k)
		}
		index[i] = j
	}
	if len(uniq) == len(keys) {
		return keys, nil
	}
	return uniq, index
}

// appendKeyIdentity appends an unambiguous encoding of the datums of a key.
func appendKeyIdentity(b []byte, key []domain.Datum) []byte {
	for _, d := range key {
		if d.Null {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.LittleEndian.AppendUint64(b, uint64(d.I64))
		b = binary.LittleEndian.AppendUint32(b, uint32(d.Nanos))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(d.F64))
		b = binary.LittleEndian.AppendUint64(b, uint64(len(d.Bytes)))
		b = append(b, d.Bytes...)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(d.Elems)))
		b = appendKeyIdentity(b, d.Elems)
	}
	return b
}
