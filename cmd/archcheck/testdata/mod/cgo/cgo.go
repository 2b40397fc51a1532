// Package cgo needs cgo.
package cgo

// #include <stdlib.h>
import "C"

// Abs is C's abs.
func Abs(x int) int { return int(C.abs(C.int(x))) }
