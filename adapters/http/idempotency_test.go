package http

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// idemFunc is an IdempotentWriter answering what the test scripts.
type idemFunc func(key application.IdempotencyKey) (application.IdempotentResult, error)

func (f idemFunc) Write(_ context.Context, _ application.Scope, _ application.WriteCommand, key application.IdempotencyKey) (application.IdempotentResult, error) {
	return f(key)
}

func withIdempotency(w IdempotentWriter) gatewayOption {
	return func(_ *Options, d *Deps) { d.Idempotency = w }
}

const idemRecords = db + "/d/tables/t/records"

func TestIdempotencyKeyHeader(t *testing.T) {
	ok := application.IdempotentResult{WriteResult: application.WriteResult{IDs: []string{"a", "b"},
		Results: []domain.EntryResult{{}, {Code: "outcome_unknown", Message: "m", Applied: domain.AppliedUnknown}}}}
	ok.Summary.Rows, ok.Summary.Succeeded, ok.Summary.Failed, ok.Summary.AppliedUnknown = 2, 1, 1, 1
	replayed := ok
	replayed.Replayed = true
	replayedErr := application.IdempotentResult{Replayed: true, Err: &domain.Error{Kind: domain.KindNotFound, Resource: domain.ResourceTable, Message: "gone"}}
	for _, tc := range []struct {
		name       string
		key        string
		res        application.IdempotentResult
		err        error
		status     int
		code       string
		replayed   string
		retryAfter string
	}{
		{name: "first", key: "k", res: ok, status: http.StatusOK},
		{name: "replay", key: "k", res: replayed, status: http.StatusOK, replayed: "true"},
		{name: "replayed error", key: "k", res: replayedErr, status: http.StatusNotFound, code: "table_not_found", replayed: "true"},
		{name: "reused", key: "k", err: &application.KeyReusedError{Key: "k"}, status: http.StatusUnprocessableEntity, code: "invalid_argument"},
		{name: "in flight", key: "k", err: &application.KeyInFlightError{Key: "k", RetryAfter: 2500 * time.Millisecond},
			status: http.StatusConflict, code: "failed_precondition", retryAfter: "3"},
		{name: "invalid key", key: "a b", status: http.StatusBadRequest, code: "invalid_argument"},
		{name: "ledger unavailable", key: "k", err: &domain.Error{Kind: domain.KindUnavailable, Message: "ledger"}, status: http.StatusServiceUnavailable, code: "unavailable", retryAfter: "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got application.IdempotencyKey
			g := newGateway(t, withIdempotency(idemFunc(func(k application.IdempotencyKey) (application.IdempotentResult, error) {
				got = k
				return tc.res, tc.err
			})))
			r := g.call(http.MethodPost, idemRecords, `{"entries":[]}`, HeaderIdempotencyKey, tc.key)
			require.Equal(t, tc.status, r.status, "%s", r.body)
			assert.Equal(t, tc.replayed, r.header.Get(HeaderIdempotentReplayed))
			assert.Equal(t, tc.retryAfter, r.header.Get("Retry-After"))
			if tc.code != "" {
				assert.Equal(t, tc.code, r.errorCode(t))
				return
			}
			assert.Equal(t, "k", got.Key)
			assert.Equal(t, fingerprint([]byte(`{"entries":[]}`), false), got.Fingerprint)
			assert.JSONEq(t, `{"row_count":2,"success_count":1,"error_count":1,"successes":[{"id":"a"}],
				"failures":[{"id":"b","error_code":"failed_precondition","message":"outcome_unknown: m","retryable":false,"applied":"unknown"}]}`, string(r.body))
		})
	}
}

func TestIdempotencyKeyDisabled(t *testing.T) {
	g := newGateway(t)
	r := g.call(http.MethodPost, idemRecords, `{"entries":[]}`, HeaderIdempotencyKey, "k")
	assert.Equal(t, http.StatusNotImplemented, r.status, "%s", r.body)
	assert.Equal(t, "unsupported", r.errorCode(t))
}

func TestFingerprint(t *testing.T) {
	base := fingerprint([]byte(`{"entries":[{"id":"1","append":{"a":1}}]}`), false)
	assert.Equal(t, base, fingerprint([]byte("{ \"entries\" : [ {\"id\":\"1\", \"append\":{\"a\":1}} ] }\n"), false), "insignificant whitespace")
	assert.NotEqual(t, base, fingerprint([]byte(`{"entries":[{"id":"1","append":{"a":2}}]}`), false))
	assert.NotEqual(t, base, fingerprint([]byte(`{"entries":[{"id":"1","append":{"a":1}}]}`), true), "the invalid-entries mode changes the answer")
	assert.NotEqual(t, fingerprint([]byte("not json"), false), fingerprint([]byte("not  json"), false), "a body that is not JSON as is")
}
