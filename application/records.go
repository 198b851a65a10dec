package application

// This file holds what the data-plane use cases share: RecordService, its
// limits and options, the definition lookup and the error explanations. The
// use cases live beside it, one file each: write.go (Write), lookup.go
// (Lookup) and prefix_lookup.go (PrefixLookup).

import (
	"context"
	"fmt"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/defaults"
	"github.com/fluss-gateway/fluss-gateway-go/internal/sealed"
)

// RecordLimits bound the data-plane requests (`gateway.rest.write.*`,
// `gateway.rest.lookup.*`, `gateway.rest.prefix-lookup.*`). A zero field
// takes the default of the official gateway.
type RecordLimits struct {
	// WriteMaxRows bounds the entries of one write.
	WriteMaxRows int
	// LookupMaxKeys bounds the keys of one lookup.
	LookupMaxKeys int
	// LookupMaxKeyBytes bounds the encoded size of a lookup or prefix-lookup
	// request (its keys or prefixes), in bytes.
	LookupMaxKeyBytes int64
	// PrefixLookupMaxPrefixes bounds the prefixes of one prefix lookup.
	PrefixLookupMaxPrefixes int
	// PrefixLookupMaxRowsPerPrefix bounds the rows returned per prefix.
	PrefixLookupMaxRowsPerPrefix int
}

// Defaults of RecordLimits, those of the official gateway; bootstrap/config
// uses them as the defaults of the keys.
const (
	DefaultWriteMaxRows                 = 10_000
	DefaultLookupMaxKeys                = 128
	DefaultLookupMaxKeyBytes            = 1 << 20
	DefaultPrefixLookupMaxPrefixes      = 16
	DefaultPrefixLookupMaxRowsPerPrefix = 1000
)

func (l RecordLimits) withDefaults() RecordLimits {
	l.WriteMaxRows = defaults.Positive(l.WriteMaxRows, DefaultWriteMaxRows)
	l.LookupMaxKeys = defaults.Positive(l.LookupMaxKeys, DefaultLookupMaxKeys)
	l.LookupMaxKeyBytes = defaults.Positive(l.LookupMaxKeyBytes, DefaultLookupMaxKeyBytes)
	l.PrefixLookupMaxPrefixes = defaults.Positive(l.PrefixLookupMaxPrefixes, DefaultPrefixLookupMaxPrefixes)
	l.PrefixLookupMaxRowsPerPrefix = defaults.Positive(l.PrefixLookupMaxRowsPerPrefix, DefaultPrefixLookupMaxRowsPerPrefix)
	return l
}

// RecordOptions configure the RecordService.
type RecordOptions struct {
	Limits RecordLimits
	// MaxDeliveryTime bounds how long the writer may spend delivering one
	// write, from the start of the use case (`gateway.rest.write.max-delivery-time`).
	// Whatever its value, delivery also ends AnswerMargin before the
	// request's own deadline, leaving time to answer. 0: only that bound.
	MaxDeliveryTime time.Duration
	// SchemaCacheSize bounds the remembered definition snapshots (and their
	// compiled codecs); 0 takes DefaultSnapshotCacheSize. Definitions
	// themselves come from the session's domain.TableDefinitions (the
	// adapter's one metadata cache) on every request.
	SchemaCacheSize int
	// SchemaRefetchInterval is how old a definition must be before a
	// request that fails to decode against it makes the service refresh the
	// definition (and decode once more): often enough to pick up a column
	// another client added a moment ago, rarely enough that a stream of
	// invalid requests does not turn into a stream of metadata calls. The
	// gateway's own DDL needs no refresh: it invalidates the definition. 0
	// means DefaultSchemaRefetchInterval.
	SchemaRefetchInterval time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Tokens seals prefix-lookup continuations (the one *sealed.Sealer of
	// bootstrap/sealer.go); nil: a random key of this process.
	Tokens *sealed.Sealer
	// Metrics counts the outcomes of the use cases (a decorator around
	// them, metrics.go); nil: none.
	Metrics RecordMetrics
}

// DefaultSchemaRefetchInterval is the default RecordOptions.SchemaRefetchInterval.
const DefaultSchemaRefetchInterval = time.Second

// MaxAnswerMargin is the longest time reserved at the end of a write's
// deadline for answering once delivery has ended.
const MaxAnswerMargin = 500 * time.Millisecond

// AnswerMargin is the time reserved for answering a request that has
// remaining time left: a quarter of it, at most MaxAnswerMargin.
func AnswerMargin(remaining time.Duration) time.Duration {
	return max(0, min(MaxAnswerMargin, remaining/4))
}

// RecordService implements the data-plane use cases: writes, primary-key
// lookups and prefix lookups.
type RecordService struct {
	clusters domain.Clusters
	opts     RecordOptions
	limits   RecordLimits
	snaps    *snapshots
	refetch  time.Duration
	now      func() time.Time
	tokens   *sealed.Sealer
	// uc runs the use cases: the service's own (write, lookup,
	// prefixLookup), wrapped in the metrics decorator when Metrics is set.
	uc useCases
}

// NewRecordService returns the data-plane use cases over clusters.
func NewRecordService(clusters domain.Clusters, opts RecordOptions) *RecordService {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &RecordService{
		clusters: clusters,
		opts:     opts,
		limits:   opts.Limits.withDefaults(),
		snaps:    newSnapshots(opts.SchemaCacheSize, now),
		refetch:  opts.SchemaRefetchInterval,
		now:      now,
		tokens:   opts.Tokens,
	}
	if s.tokens == nil {
		s.tokens = sealed.NewRandom()
	}
	s.refetch = defaults.Positive(s.refetch, DefaultSchemaRefetchInterval)
	s.uc = s
	if opts.Metrics != nil {
		s.uc = metered{next: s, m: opts.Metrics}
	}
	return s
}

// Limits returns the effective limits.
func (s *RecordService) Limits() RecordLimits { return s.limits }

// definition resolves key's table through the session's definitions.
func (s *RecordService) definition(key tableKey, session domain.Session) definition {
	return definition{key: key, defs: definitionsOf(session), snaps: s.snaps}
}

func (s *RecordService) checkKeyBytes(n int, what string) error {
	if int64(n) > s.limits.LookupMaxKeyBytes {
		return &domain.Error{Kind: domain.KindLimitExceeded,
			Message: fmt.Sprintf("the %s request is %d bytes, above the limit of %d bytes for keys", what, n, s.limits.LookupMaxKeyBytes)}
	}
	return nil
}

// renderTable returns the definition rows in schema id schemaID are
// rendered with: the one the request used, or the refreshed one when the
// port answered in another (newer) schema. When even the refreshed
// definition is at another schema, the answer is a stale-definition error.
func renderTable(ctx context.Context, d definition, used *Table, schemaID int32) (*Table, error) {
	if schemaID == 0 || schemaID == used.Info.SchemaID {
		return used, nil
	}
	fresh, err := d.refresh(ctx)
	if err != nil {
		return nil, err
	}
	if fresh.Info.SchemaID != schemaID {
		return nil, domain.NewStaleDefinition(&domain.StaleDefinitionError{Table: d.key.path,
			UsedTableID: fresh.Info.TableID, TableID: fresh.Info.TableID, UsedSchemaID: schemaID, SchemaID: fresh.Info.SchemaID})
	}
	return fresh, nil
}

func unsupported(cluster, what string) error {
	return domain.Errorf(domain.KindUnsupported, "cluster `%s` does not support %s yet", cluster, what)
}

// MinWorkableDeadline is the shortest request deadline with which a data
// request can get through when the gateway has not served the table or the
// cluster recently: the fixed costs of resolving the table's definition and
// metadata (two round trips to the cluster) and, on first use, opening a
// connection to the coordinator and a tablet server. On a local cluster a
// write to a table the gateway had not served got through with 30 ms and not
// with 10 ms (TestGatewayDeadlineMessages); the bound leaves room for a
// loaded machine, and remote clusters add their round trip times.
const MinWorkableDeadline = 100 * time.Millisecond

// explainTimeout rewrites a whole-request timeout so that it says what
// happened (what, e.g. that nothing was written) instead of which internal
// call was running, and, when the caller's deadline was below
// MinWorkableDeadline, says so. Other errors are returned as they are.
func explainTimeout(ctx context.Context, start time.Time, err error, what string) error {
	de := domain.AsError(err)
	if de == nil || de.Kind != domain.KindTimeout {
		return err
	}
	msg := "the request deadline passed before the gateway finished; " + what
	if dl, ok := ctx.Deadline(); ok {
		budget := dl.Sub(start)
		msg = fmt.Sprintf("the request deadline (%s) passed before the gateway finished; %s", budget.Round(time.Millisecond), what)
		if budget < MinWorkableDeadline {
			msg += fmt.Sprintf("; a deadline below %s may be shorter than the fixed costs of a request "+
				"(the table's metadata and a connection to the cluster, on first use): ask for at least %s", MinWorkableDeadline, MinWorkableDeadline)
		}
	}
	out := *de
	out.Message = msg
	if out.Cause == nil {
		out.Cause = de
	}
	return &out
}

// explainNotFound adds, to a table_not_found answer, that the table's
// database is what is missing, when it is: Fluss answers both with
// TABLE_NOT_EXIST, and the official contract keeps the code
// `table_not_found` for the records routes. One DatabaseExists call, on
// this error path only; when it fails the error is returned as it is.
func (s *RecordService) explainNotFound(ctx context.Context, scope Scope, path domain.TablePath, err error) error {
	de := domain.AsError(err)
	if de == nil || de.Kind != domain.KindNotFound || de.Resource != domain.ResourceTable || path.Database == "" {
		return err
	}
	session, serr := s.clusters.Session(ctx, scope.Cluster, scope.Principal)
	if serr != nil || session.Catalog() == nil {
		return err
	}
	exists, derr := session.Catalog().DatabaseExists(ctx, path.Database)
	if derr != nil || exists {
		return err
	}
	out := *de
	out.Message = fmt.Sprintf("table `%s` does not exist: database `%s` does not exist", path, path.Database)
	return &out
}
