package arrowlog

import (
	"errors"
	"fmt"

	"github.com/fluss-gateway/fluss-gateway-go/adapters/fluss/record"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Errors reuse the sentinels of package record so that callers test one set
// with errors.Is.

func invalidValue(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindInvalidArgument, Message: fmt.Sprintf(format, args...), Cause: record.ErrInvalidValue}
}

func invalidSchema(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindInvalidArgument, Message: fmt.Sprintf(format, args...), Cause: record.ErrInvalidSchema}
}

func invalidArg(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindInvalidArgument, Message: fmt.Sprintf(format, args...), Cause: record.ErrInvalidValue}
}

func unsupported(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindUnsupported, Message: fmt.Sprintf(format, args...), Cause: record.ErrUnsupported}
}

func corrupt(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindBackend, Message: fmt.Sprintf(format, args...), Cause: record.ErrCorrupt}
}

func internal(format string, args ...any) error {
	return &domain.Error{Kind: domain.KindInternal, Message: fmt.Sprintf(format, args...)}
}

// prefix returns err with its message prefixed by a location such as
// "column 3", keeping kind and cause. Only called on failure paths.
func prefix(err error, format string, args ...any) error {
	p := fmt.Sprintf(format, args...)
	var de *domain.Error
	if errors.As(err, &de) {
		cp := *de
		cp.Message = p + ": " + de.Message
		return &cp
	}
	return fmt.Errorf("%s: %w", p, err)
}
