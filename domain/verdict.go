package domain

// The entry kinds a backend adapter maps its own failure reasons to (one
// table, in the adapter: for Fluss, adapters/fluss/writer/codes.go). Every
// kind is an official code (ErrorCodes); the REST adapter renders Kind as the
// entry's `error_code` and the adapter's finer reason (EntryResult.Code) in
// front of the message, so it needs to know no backend's vocabulary.
const (
	EntryUnavailable        EntryKind = "unavailable"
	EntryBackend            EntryKind = "backend"
	EntryInvalidArgument    EntryKind = "invalid_argument"
	EntryLimitExceeded      EntryKind = "limit_exceeded"
	EntryFailedPrecondition EntryKind = "failed_precondition"
	EntryTimeout            EntryKind = "timeout"
	EntryResourceExhausted  EntryKind = "resource_exhausted"
)

// Valid reports whether k is an official code (ErrorCodes).
func (k EntryKind) Valid() bool { return IsErrorCode(string(k)) }
