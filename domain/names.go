package domain

import "fmt"

// MaxNameLength is the longest database, table or partition-value identifier
// Fluss accepts.
const MaxNameLength = 200

// reservedNamePrefix marks Fluss-internal databases, tables and partitions;
// users may not create objects whose name starts with it.
const reservedNamePrefix = "__"

// PartitionNameSeparator joins partition values into a partition name, in
// partition-key order (for example `2026-01-01$eu`).
const PartitionNameSeparator = "$"

// ValidateName checks an identifier against Fluss's rules for database and
// table names and partition values: 1 to MaxNameLength ASCII letters, digits,
// '_' or '-', and neither "." nor "..". The returned invalid_argument error
// names field, so callers pass the request field the value came from.
func ValidateName(field, value string) *Error {
	switch {
	case value == "":
		return InvalidArgument("%s: must not be empty", field)
	case value == "." || value == "..":
		return InvalidArgument("%s: %q is not allowed", field, value)
	case len(value) > MaxNameLength:
		return InvalidArgument("%s: longer than %d characters", field, MaxNameLength)
	}
	for i := 0; i < len(value); i++ {
		if !isNameByte(value[i]) {
			return InvalidArgument("%s: %s contains characters other than ASCII letters, digits, '_' and '-'",
				field, quoteName(value))
		}
	}
	return nil
}

// ValidateNewName is ValidateName plus the rule for objects being created:
// the "__" prefix is reserved for Fluss-internal objects.
func ValidateNewName(field, value string) *Error {
	if err := ValidateName(field, value); err != nil {
		return err
	}
	if len(value) >= len(reservedNamePrefix) && value[:len(reservedNamePrefix)] == reservedNamePrefix {
		return InvalidArgument("%s: the prefix %q is reserved for Fluss-internal objects", field, reservedNamePrefix)
	}
	return nil
}

func isNameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
}

// quoteName quotes a rejected identifier for an error message, shortening very
// long values so a hostile name cannot inflate the response.
func quoteName(v string) string {
	const keep = 64
	if len(v) > keep {
		return fmt.Sprintf("%q…", v[:keep])
	}
	return fmt.Sprintf("%q", v)
}
