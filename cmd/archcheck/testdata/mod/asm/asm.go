// Package asm declares a function whose body is assembly for amd64 only.
package asm

// Add is implemented in add_amd64.s.
func Add(x, y int) int
