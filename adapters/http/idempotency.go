package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/application"
)

// The Idempotency-Key extension of POST .../records (docs/idempotency.md):
// a write carrying the header lands at most once; a retry with the same key
// and body gets the recorded answer with `Idempotent-Replayed: true`.

// Headers of the Idempotency-Key extension.
const (
	HeaderIdempotencyKey     = "Idempotency-Key"
	HeaderIdempotentReplayed = "Idempotent-Replayed"
)

// IdempotentWriter serves keyed writes; application.IdempotentWrites
// implements it.
type IdempotentWriter interface {
	Write(ctx context.Context, scope application.Scope, cmd application.WriteCommand, key application.IdempotencyKey) (application.IdempotentResult, error)
}

var _ IdempotentWriter = (*application.IdempotentWrites)(nil)

// write runs a write: keyed when the request carries Idempotency-Key (and
// the gateway has a ledger), as before otherwise. A replayed answer, verdicts
// or error alike, carries `Idempotent-Replayed: true`.
func (a *api) write(ctx context.Context, c *fiber.Ctx, scope application.Scope, cmd application.WriteCommand, body []byte) (application.WriteResult, error) {
	key := c.Get(HeaderIdempotencyKey)
	if key == "" {
		return a.records.Write(ctx, scope, cmd)
	}
	if a.idempotency == nil {
		return application.WriteResult{}, unsupportedRecords(scope.Cluster, "Idempotency-Key (gateway.idempotency.enabled is false)")
	}
	if err := application.ValidateIdempotencyKey(key); err != nil {
		return application.WriteResult{}, err
	}
	res, err := a.idempotency.Write(ctx, scope, cmd, application.IdempotencyKey{
		Key: key, Fingerprint: fingerprint(body, invalidEntriesReported(c)),
	})
	var reused *application.KeyReusedError
	var inFlight *application.KeyInFlightError
	switch {
	case errors.As(err, &reused):
		return application.WriteResult{}, newHTTPError(fiber.StatusUnprocessableEntity, "invalid_argument", "%s", reused.Error())
	case errors.As(err, &inFlight):
		c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(inFlight.RetryAfterSeconds(), 10))
		return application.WriteResult{}, newHTTPError(fiber.StatusConflict, "failed_precondition", "%s", inFlight.Error())
	case err != nil:
		return application.WriteResult{}, err
	}
	if res.Replayed {
		c.Set(HeaderIdempotentReplayed, "true")
	}
	return res.WriteResult, res.Err
}

// fingerprint is the hash a key's request is recognised by: SHA-256 of the
// body with insignificant JSON whitespace removed (the decompressed body as
// is when it is not JSON) and of the invalid-entries mode, which changes the
// answer. Linear in the body.
func fingerprint(body []byte, report bool) string {
	h := sha256.New()
	// jsontext's Compact keeps strings and numbers as they are spelled and
	// accepts duplicate names and invalid UTF-8, as encoding/json's did:
	// the fingerprints the ledger holds stay valid (FuzzJSONCompat).
	compact := jsontext.Value(bytes.Clone(body))
	if compact.Compact() == nil {
		h.Write(compact)
	} else {
		h.Write(body)
	}
	if report {
		h.Write([]byte("\x00report"))
	}
	return hex.EncodeToString(h.Sum(nil))
}
