// Package needscgo imports a package that has only cgo files.
package needscgo

import "example.com/mod/cgo"

// Abs is cgo.Abs.
func Abs(x int) int { return cgo.Abs(x) }
