package application

import (
	"context"
	"time"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// RecordMetrics observes the outcomes of the data-plane use cases
// (telemetry.GatewayMetrics implements it): every write's verdicts, and the
// keys or prefixes of every lookup by outcome, kind "lookup" or
// "prefix_lookup", counted found, missed (no row) or failed.
type RecordMetrics interface {
	RecordEntries(ctx context.Context, table domain.TablePath, results []domain.EntryResult)
	RecordLookups(ctx context.Context, table domain.TablePath, kind string, found, missed, failed int)
}

// RecordRunMetrics is implemented by RecordMetrics that count a write's
// verdicts run by run (WriteResult.Runs) without expanding them; the
// others get RecordEntries with the runs expanded.
type RecordRunMetrics interface {
	RecordEntryRuns(ctx context.Context, table domain.TablePath, runs []domain.ResultRun)
}

// useCases are the data-plane use cases as RecordService's exported methods
// run them, before the errors are explained: *RecordService itself, or a
// decorator around it.
type useCases interface {
	write(ctx context.Context, scope Scope, cmd WriteCommand, start time.Time) (WriteResult, error)
	lookup(ctx context.Context, scope Scope, path domain.TablePath, dec KeyDecoder) (LookupResult, error)
	prefixLookup(ctx context.Context, scope Scope, path domain.TablePath, dec PrefixDecoder) (PrefixLookupResult, error)
}

// metered is the metrics decorator: it runs the use cases of next and
// reports their outcomes to m. A write is counted whenever it has verdicts
// (a throttled write too), a lookup when it succeeds.
type metered struct {
	next useCases
	m    RecordMetrics
}

func (d metered) write(ctx context.Context, scope Scope, cmd WriteCommand, start time.Time) (WriteResult, error) {
	res, err := d.next.write(ctx, scope, cmd, start)
	switch rm, byRun := d.m.(RecordRunMetrics); {
	case res.Table == nil: // the entries have no verdicts
	case res.Runs == nil:
		d.m.RecordEntries(ctx, cmd.Path, res.Results)
	case byRun:
		rm.RecordEntryRuns(ctx, cmd.Path, res.Runs)
	default:
		d.m.RecordEntries(ctx, cmd.Path, res.Verdicts())
	}
	return res, err
}

func (d metered) lookup(ctx context.Context, scope Scope, path domain.TablePath, dec KeyDecoder) (LookupResult, error) {
	res, err := d.next.lookup(ctx, scope, path, dec)
	if err == nil && res.Response != nil {
		found, missed, failed := outcomes(res.Response.Results, func(r domain.LookupResult) (bool, bool) { return r.Err != nil, r.Row != nil })
		d.m.RecordLookups(ctx, path, "lookup", found, missed, failed)
	}
	return res, err
}

func (d metered) prefixLookup(ctx context.Context, scope Scope, path domain.TablePath, dec PrefixDecoder) (PrefixLookupResult, error) {
	res, err := d.next.prefixLookup(ctx, scope, path, dec)
	if err == nil && res.Response != nil {
		found, missed, failed := outcomes(res.Response.Results, func(r domain.PrefixLookupResult) (bool, bool) { return r.Err != nil, len(r.Rows) > 0 })
		d.m.RecordLookups(ctx, path, "prefix_lookup", found, missed, failed)
	}
	return res, err
}

// outcomes counts results by what of tells of each: failed, else found (a
// row), else missed.
func outcomes[R any](results []R, of func(R) (failed, found bool)) (found, missed, failed int) {
	for _, r := range results {
		switch f, ok := of(r); {
		case f:
			failed++
		case ok:
			found++
		default:
			missed++
		}
	}
	return found, missed, failed
}
