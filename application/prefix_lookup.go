package application

// This file holds the prefix-lookup use case (RecordService.PrefixLookup),
// its page tokens and lookups across partitions.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// PrefixDecoder turns a prefix-lookup request's body into prefixes.
type PrefixDecoder interface {
	Size() int
	// DecodePrefixes decodes the prefix column names and the prefixes,
	// one Datum per prefix column; more than maxPrefixes is
	// KindLimitExceeded.
	DecodePrefixes(t *Table, maxPrefixes int) (DecodedPrefixes, error)
}

// DecodedPrefixes is what a PrefixDecoder makes of a request.
type DecodedPrefixes struct {
	Columns  []string
	Prefixes [][]domain.Datum
	// PageToken is the `page_token` extension of the body, "" for a first
	// page: it continues a truncated prefix lookup, and is only valid for
	// the one prefix it was issued for, on the same table.
	PageToken string
}

// PrefixLookupResult is the outcome of a prefix lookup.
type PrefixLookupResult struct {
	Table    *Table
	Response *domain.PrefixLookupResponse
	// NextPageTokens has, per prefix, the token that continues a truncated
	// answer ("" when it is complete); see DecodedPrefixes.PageToken.
	NextPageTokens []string
}

// PrefixLookup returns, for each prefix, the rows whose bucket key (plus
// partition columns) equals it, at most PrefixLookupMaxRowsPerPrefix each.
func (s *RecordService) PrefixLookup(ctx context.Context, scope Scope, path domain.TablePath, dec PrefixDecoder) (PrefixLookupResult, error) {
	start := s.now()
	res, err := s.uc.prefixLookup(ctx, scope, path, dec)
	err = s.explainNotFound(ctx, scope, path, err)
	return res, explainTimeout(ctx, start, err, "a prefix lookup writes nothing")
}

func (s *RecordService) prefixLookup(ctx context.Context, scope Scope, path domain.TablePath, dec PrefixDecoder) (PrefixLookupResult, error) {
	if err := validatePath(path, false); err != nil {
		return PrefixLookupResult{}, err
	}
	if err := s.checkKeyBytes(dec.Size(), "prefix lookup"); err != nil {
		return PrefixLookupResult{}, err
	}
	session, err := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if err != nil {
		return PrefixLookupResult{}, err
	}
	port := session.Lookup()
	if port == nil {
		return PrefixLookupResult{}, unsupported(scope.Cluster, "prefix lookups")
	}
	key := keyOf(scope, path)
	offset := 0 // rows of the prefix's answer already returned (page_token)
	decode := func(t *Table) (*domain.PrefixLookupRequest, []string, error) {
		if len(t.Info.Descriptor.Schema.PrimaryKey) == 0 {
			return nil, nil, domain.InvalidArgument("table `%s` has no primary key; prefix lookups need a primary-key table", path)
		}
		dp, err := dec.DecodePrefixes(t, s.limits.PrefixLookupMaxPrefixes)
		cols, prefixes := dp.Columns, dp.Prefixes
		if err != nil {
			return nil, nil, err
		}
		if len(prefixes) > s.limits.PrefixLookupMaxPrefixes {
			return nil, nil, &domain.Error{Kind: domain.KindLimitExceeded,
				Message: fmt.Sprintf("prefixes: %d prefixes exceed the limit of %d", len(prefixes), s.limits.PrefixLookupMaxPrefixes)}
		}
		if err := validatePrefixColumns(t.Info, cols); err != nil {
			return nil, nil, err
		}
		if err := checkKeyPartitions(t.Info, cols, prefixes, "prefixes"); err != nil {
			return nil, nil, err
		}
		offset = 0
		if dp.PageToken != "" {
			if len(prefixes) != 1 {
				return nil, nil, domain.InvalidArgument("page_token: continues the answer of one prefix; the request has %d prefixes", len(prefixes))
			}
			if offset, err = openPrefixToken(s.tokens, prefixScope(scope, path, cols, prefixes[0]), dp.PageToken); err != nil {
				return nil, nil, err
			}
		}
		return &domain.PrefixLookupRequest{
			Table: path, TableID: t.Info.TableID, SchemaID: t.Info.SchemaID,
			PrefixColumns: cols, Prefixes: prefixes, MaxRowsPerPrefix: offset + s.limits.PrefixLookupMaxRowsPerPrefix,
		}, nil, nil
	}
	def := s.definition(key, session)
	run := func(t *Table, req *domain.PrefixLookupRequest) (PrefixLookupResult, error) {
		var resp *domain.PrefixLookupResponse
		var err error
		if acrossPartitions(t.Info, req.PrefixColumns) {
			resp, err = prefixLookupAcrossPartitions(ctx, session, port, req)
		} else {
			resp, err = port.PrefixLookup(ctx, req)
		}
		if err != nil {
			return PrefixLookupResult{}, err
		}
		if resp == nil || len(resp.Results) != len(req.Prefixes) {
			return PrefixLookupResult{}, domain.Errorf(domain.KindInternal, "prefix lookup returned a response that does not match its %d prefixes", len(req.Prefixes))
		}
		for i := range resp.Results {
			if n := len(resp.Results[i].Rows); n > req.MaxRowsPerPrefix {
				resp.Results[i].Rows = resp.Results[i].Rows[:req.MaxRowsPerPrefix]
				resp.Results[i].Truncated = true
			}
		}
		tokens := make([]string, len(resp.Results))
		for i := range resp.Results {
			r := &resp.Results[i]
			if r.Err != nil {
				continue
			}
			r.Rows = r.Rows[min(offset, len(r.Rows)):]
			if r.Truncated {
				if next := offset + len(r.Rows); next <= maxPrefixOffset {
					tokens[i] = sealPrefixToken(s.tokens, prefixScope(scope, path, req.PrefixColumns, req.Prefixes[i]), next)
				}
			}
		}
		rt, err := renderTable(ctx, def, t, resp.SchemaID)
		return PrefixLookupResult{Table: rt, Response: resp, NextPageTokens: tokens}, err
	}
	_, _, res, err := withDefinition(ctx, def, s.refetch, s.now, decode, run)
	return res, err
}

// validatePrefixColumns checks that prefix columns name what Fluss can look
// up by prefix: the bucket key, in order, plus every partition column, where
// the bucket key is a proper prefix of the primary key without the
// partition columns.
func validatePrefixColumns(info domain.TableInfo, cols []string) error {
	d := info.Descriptor
	pk := d.Schema.PrimaryKey
	bucket := d.BucketKeys
	if len(bucket) == 0 {
		bucket = domain.DefaultBucketKeys(pk, d.PartitionKeys)
	}
	// The checks compare without copying the lists (issue 22: twice per
	// request); the messages copy them.
	if physPK := countWithout(pk, d.PartitionKeys); len(bucket) >= physPK || !equalWithout(bucket, pk, d.PartitionKeys, len(bucket)) {
		return domain.InvalidArgument("table `%s` does not support prefix lookups: its bucket key %v is not a proper prefix of its primary key %v (without partition columns)",
			info.Path, bucket, without(pk, d.PartitionKeys))
	}
	if !acrossPartitions(info, cols) {
		for _, p := range d.PartitionKeys {
			if !slices.Contains(cols, p) {
				return domain.InvalidArgument("prefix_columns: must include the partition column `%s`, or leave out every partition column to look up across all partitions", p)
			}
		}
	}
	if countWithout(cols, d.PartitionKeys) != len(bucket) || !equalWithout(bucket, cols, d.PartitionKeys, len(bucket)) {
		if len(d.PartitionKeys) > 0 {
			return domain.InvalidArgument("prefix_columns: %v must be the bucket key %v in this order, plus the partition columns %v",
				cols, bucket, d.PartitionKeys)
		}
		return domain.InvalidArgument("prefix_columns: %v must be the bucket key %v in this order", cols, bucket)
	}
	return nil
}

// without returns cols without the columns in drop, as a new list.
func without(cols, drop []string) []string {
	return slices.DeleteFunc(slices.Clone(cols), func(c string) bool { return slices.Contains(drop, c) })
}

// countWithout is len(without(cols, drop)).
func countWithout(cols, drop []string) int {
	n := 0
	for _, c := range cols {
		if !slices.Contains(drop, c) {
			n++
		}
	}
	return n
}

// equalWithout reports whether want equals the first n columns of
// without(cols, drop) (which has at least n).
func equalWithout(want, cols, drop []string, n int) bool {
	if len(want) != n {
		return false
	}
	i := 0
	for _, c := range cols {
		if i == n {
			break
		}
		if slices.Contains(drop, c) {
			continue
		}
		if want[i] != c {
			return false
		}
		i++
	}
	return i == n
}

// acrossPartitions reports whether prefix columns of a partitioned table
// leave out every partition column: the prefixes are then looked up in
// every partition (an extension, issue 23).
func acrossPartitions(info domain.TableInfo, cols []string) bool {
	keys := info.Descriptor.PartitionKeys
	return len(keys) > 0 && !slices.ContainsFunc(cols, func(c string) bool { return slices.Contains(keys, c) })
}

// prefixFanOut bounds the partitions looked up at once by one prefix
// lookup across partitions.
const prefixFanOut = 4

// prefixLookupAcrossPartitions looks req's prefixes up in every partition
// of the table (listed now, in name order), at most prefixFanOut partitions
// at a time, and merges the answers: each prefix's rows partition after
// partition, cut at req.MaxRowsPerPrefix (then Truncated), as one lookup
// would answer them; a prefix that failed in any partition carries that
// partition's error. Each partition answers at most MaxRowsPerPrefix rows
// per prefix, so the rows held before the cut are bounded by the
// partitions times that.
func prefixLookupAcrossPartitions(ctx context.Context, session domain.Session, port domain.Lookup, req *domain.PrefixLookupRequest) (*domain.PrefixLookupResponse, error) {
	parts, err := session.Catalog().ListPartitions(ctx, req.Table)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(parts, func(a, b domain.PartitionInfo) int { return strings.Compare(a.Name, b.Name) })
	answers := make([]*domain.PrefixLookupResponse, len(parts))
	errs := make([]error, len(parts))
	sem := make(chan struct{}, prefixFanOut)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			r := *req
			r.Partition = parts[i].Name
			answers[i], errs[i] = port.PrefixLookup(ctx, &r)
			if errs[i] == nil && (answers[i] == nil || len(answers[i].Results) != len(req.Prefixes)) {
				errs[i] = domain.Errorf(domain.KindInternal, "prefix lookup in partition `%s` returned a response that does not match its %d prefixes", parts[i].Name, len(req.Prefixes))
			}
		}()
	}
	wg.Wait()
	out := &domain.PrefixLookupResponse{SchemaID: req.SchemaID, Results: make([]domain.PrefixLookupResult, len(req.Prefixes))}
	for i, a := range answers {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if i == 0 {
			out.SchemaID = a.SchemaID
		} else if a.SchemaID != out.SchemaID {
			// The schema changed between two partitions' answers: ask again.
			return nil, &domain.Error{Kind: domain.KindUnavailable, Retryable: true,
				Message: fmt.Sprintf("the schema of table `%s` changed during the lookup; retry", req.Table)}
		}
		for j := range a.Results {
			got, m := &a.Results[j], &out.Results[j]
			if m.Err != nil {
				continue
			}
			if got.Err != nil {
				m.Rows, m.Truncated, m.Err = nil, false, got.Err
				continue
			}
			room := len(got.Rows)
			if req.MaxRowsPerPrefix > 0 {
				room = min(room, req.MaxRowsPerPrefix-len(m.Rows))
			}
			m.Rows = append(m.Rows, got.Rows[:room]...)
			if got.Truncated || room < len(got.Rows) {
				m.Truncated = true
			}
		}
	}
	return out, nil
}
