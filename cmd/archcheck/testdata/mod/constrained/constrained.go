// Package constrained calls a function that only its amd64 file defines.
package constrained

// Value is what only amd64 has.
var Value = onlyOnAmd64()
