// Package defaults fills the options a caller left unset. It owns nothing
// else and imports no toolgate package.
package defaults

// Positive sets *v to d when *v is not positive: an option left at zero,
// or set below it, takes its default.
func Positive[T ~int | ~int64 | ~float64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
