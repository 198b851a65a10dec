package domain

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateName(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		value   string
		newName bool
		wantErr string
	}{
		{name: "simple", value: "orders"},
		{name: "all allowed bytes", value: "Ab-9_z"},
		{name: "max length", value: strings.Repeat("a", MaxNameLength)},
		{name: "empty", value: "", wantErr: "db: must not be empty"},
		{name: "dot", value: ".", wantErr: `db: "." is not allowed`},
		{name: "dot dot", value: "..", wantErr: `db: ".." is not allowed`},
		{name: "too long", value: strings.Repeat("a", MaxNameLength+1), wantErr: "longer than 200"},
		{name: "space", value: "a b", wantErr: "characters other than"},
		{name: "dollar", value: "a$b", wantErr: "characters other than"},
		{name: "non ascii", value: "ä", wantErr: "characters other than"},
		{name: "internal prefix readable", value: "__internal"},
		{name: "internal prefix not creatable", value: "__internal", newName: true, wantErr: "reserved"},
		{name: "single underscore creatable", value: "_x", newName: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var err *Error
			if tc.newName {
				err = ValidateNewName("db", tc.value)
			} else {
				err = ValidateName("db", tc.value)
			}
			if tc.wantErr == "" {
				assert.Nil(t, err)
				return
			}
			require.NotNil(t, err)
			assert.Equal(t, KindInvalidArgument, err.Kind)
			assert.Contains(t, err.Message, tc.wantErr)
			assert.True(t, strings.HasPrefix(err.Message, "db: "), err.Message)
		})
	}
}
