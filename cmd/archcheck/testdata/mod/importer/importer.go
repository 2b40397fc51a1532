// Package importer imports the packages that do not build on arm64, so that their errors are a dependency's.
package importer

import (
	"example.com/mod/asm"
	"example.com/mod/constrained"
)

// Sum uses both.
func Sum() int { return asm.Add(constrained.Value, 1) }
