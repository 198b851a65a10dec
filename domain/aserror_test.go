package domain

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAsErrorShortcuts(t *testing.T) {
	e := &Error{Kind: KindNotFound, Message: "gone"}
	cases := []struct {
		name string
		err  error
		want *Error
	}{
		{"nil", nil, nil},
		{"an *Error", e, e},
		{"a wrapped *Error", fmt.Errorf("while looking: %w", e), e},
		{"a joined *Error", errors.Join(errors.New("x"), e), e},
		{"a foreign error", errors.New("boom"), nil},
		{"a nil *Error in an interface", (*Error)(nil), nil},
	}
	for _, tc := range cases {
		if tc.want == nil {
			assert.Nil(t, AsError(tc.err), tc.name)
		} else {
			assert.Same(t, tc.want, AsError(tc.err), tc.name)
		}
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = AsError(nil) }), "no allocation without an error")
}
