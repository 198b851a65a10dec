// Package defaults holds the zero-value rule of the components' options:
// a count, size or duration left at zero (or set below it) takes the
// component's default.
package defaults

// Positive returns v when it is greater than zero, def otherwise.
func Positive[T ~int | ~int32 | ~int64 | ~float64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
