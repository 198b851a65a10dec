package http

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
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
// answer. Linear in the body; the compacted body is streamed into the hash,
// never held whole. The digests are those encoding/json's Compact gave
// (FuzzJSONCompat), so the fingerprints already in ledgers stay valid.
func fingerprint(body []byte, report bool) string {
	h := sha256.New()
	if !validJSON(body) || compactTo(h, body) != nil {
		h.Reset()
		h.Write(body)
	}
	if report {
		h.Write([]byte("\x00report"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// compactOptions are encoding/json's Compact rules in jsontext terms:
// duplicate names and invalid UTF-8 pass, strings keep their spelling.
var compactOptions = []jsontext.Options{
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	jsontext.PreserveRawStrings(true),
}

// compactTo writes body, one valid JSON value (validJSON), to w without
// insignificant whitespace, token by token with strings and numbers as they
// are spelled.
func compactTo(w io.Writer, body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), compactOptions...)
	out := &trimFinalNewline{w: w}
	enc := jsontext.NewEncoder(out, compactOptions...)
	for {
		var err error
		switch dec.PeekKind() {
		case '{', '}', '[', ']':
			var tok jsontext.Token
			if tok, err = dec.ReadToken(); err == nil {
				err = enc.WriteToken(tok)
			}
		default:
			var v jsontext.Value
			if v, err = dec.ReadValue(); err == nil {
				err = enc.WriteValue(v)
			}
		}
		if err != nil {
			return err
		}
		if dec.StackDepth() == 0 {
			return out.flush()
		}
	}
}

// trimFinalNewline passes writes on holding back their last byte, which it
// drops at the end: jsontext's Encoder ends a top-level value with a
// newline encoding/json's Compact does not write.
type trimFinalNewline struct {
	w       io.Writer
	last    [1]byte
	pending bool
}

func (t *trimFinalNewline) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if t.pending {
		if _, err := t.w.Write(t.last[:]); err != nil {
			return 0, err
		}
	}
	if _, err := t.w.Write(p[:len(p)-1]); err != nil {
		return 0, err
	}
	t.last[0], t.pending = p[len(p)-1], true
	return len(p), nil
}

// flush ends the output: the held-back byte must be the newline.
func (t *trimFinalNewline) flush() error {
	if t.pending && t.last[0] != '\n' {
		_, err := t.w.Write(t.last[:])
		return err
	}
	return nil
}
