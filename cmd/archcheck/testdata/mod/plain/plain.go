// Package plain builds everywhere.
package plain

import "strings"

// Upper is strings.ToUpper.
func Upper(s string) string { return strings.ToUpper(s) }
