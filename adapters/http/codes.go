package http

import (
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// entryCodes maps the finer per-entry codes of the Fluss adapter (the Fluss
// exception names, snake_case) to the official ErrorCode enum. A code that is
// already official passes unchanged; an unknown one becomes `unavailable`
// when the entry is retryable and `backend` otherwise (see officialEntryCode).
var entryCodes = map[string]string{
	"record_too_large":        "limit_exceeded",
	"corrupt_record":          "invalid_argument",
	"invalid_record":          "invalid_argument",
	"invalid_target_column":   "invalid_argument",
	"not_primary_key_table":   "invalid_argument",
	"deletion_disabled":       "failed_precondition",
	"schema_not_found":        "unavailable",
	"unknown_table_or_bucket": "unavailable",
	"leader_not_available":    "unavailable",
	"not_leader_or_follower":  "unavailable",
	"not_enough_replicas":     "unavailable",
	"network":                 "unavailable",
	// An Idempotency-Key whose earlier attempt died before recording its
	// verdicts (application.EntryCodeOutcomeUnknown): a retry under this key
	// can never change the answer.
	"outcome_unknown": "failed_precondition",
}

// officialEntryCode returns the official code of a write entry's verdict and
// its message, which keeps the finer code in front when the two differ:
// `not_enough_replicas: <Fluss message>` under `unavailable`.
func officialEntryCode(code, message string, retryable bool) (string, string) {
	if domain.IsErrorCode(code) {
		return code, message
	}
	official, ok := entryCodes[code]
	switch {
	case ok:
	case retryable:
		official = "unavailable"
	default:
		official = "backend"
	}
	if message == "" {
		return official, code
	}
	return official, code + ": " + message
}
