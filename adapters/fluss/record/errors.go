package record

import (
	"errors"
	"fmt"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Sentinel causes carried by every error this package returns; test them with
// errors.Is. The errors themselves are *domain.Error values whose Kind tells
// the HTTP layer how to report them.
var (
	// ErrInvalidValue marks a Datum that cannot be encoded as its column's
	// type (out of range, wrong shape, null where Fluss forbids it). The
	// *domain.Error has Kind KindInvalidArgument.
	ErrInvalidValue = errors.New("record: invalid value")
	// ErrUnsupported marks a type, format or option this codec (or Fluss
	// 0.9.1 for that use) does not support. Kind KindUnsupported.
	ErrUnsupported = errors.New("record: unsupported")
	// ErrInvalidSchema marks a DataType tree that is incomplete or out of
	// Fluss's bounds (missing element type, DECIMAL precision 0, ...). Kind
	// KindInvalidArgument.
	ErrInvalidSchema = errors.New("record: invalid schema")
	// ErrCorrupt marks bytes that do not follow the expected Fluss format
	// (truncated, bad CRC, bad length, trailing bytes). Kind KindBackend,
	// since such bytes come from the cluster.
	ErrCorrupt = errors.New("record: corrupt data")
)

func invalidValue(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindInvalidArgument, Message: fmt.Sprintf(format, args...), Cause: ErrInvalidValue}
}

func unsupported(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindUnsupported, Message: fmt.Sprintf(format, args...), Cause: ErrUnsupported}
}

func invalidSchema(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindInvalidArgument, Message: fmt.Sprintf(format, args...), Cause: ErrInvalidSchema}
}

func corrupt(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindBackend, Message: fmt.Sprintf(format, args...), Cause: ErrCorrupt}
}

// prefixError returns err with its message prefixed by a location such as
// "column 3" or "element 2", keeping kind and cause. It is only called on
// failure paths.
func prefixError(err error, format string, args ...any) error {
	prefix := fmt.Sprintf(format, args...)
	var de *domain.Error
	if errors.As(err, &de) {
		cp := *de
		cp.Message = prefix + ": " + de.Message
		return &cp
	}
	return fmt.Errorf("%s: %w", prefix, err)
}
