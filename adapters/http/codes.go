package http

import (
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// renderEntryVerdict returns the official `error_code` of a failed write
// entry and its message, which keeps the finer reason in front when the two
// differ: `not_enough_replicas: <message>` under `unavailable`. The official
// code comes from the verdict (domain.EntryResult.Official): the backend
// adapter has mapped its own reasons already, so this adapter knows none.
func renderEntryVerdict(r domain.EntryResult) (code, message string) {
	official := string(r.Official())
	if official == r.Code {
		return official, r.Message
	}
	if r.Message == "" {
		return official, r.Code
	}
	return official, r.Code + ": " + r.Message
}
