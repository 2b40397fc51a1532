// Package e2e holds the end-to-end tests of the transfer system: they build cmd/local, run it as a separate
// process on free ports, and drive it over HTTP as a user would. The package has no code of its own.
package e2e
