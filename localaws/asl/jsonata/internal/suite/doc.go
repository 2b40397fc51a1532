// Package suite runs JSONata's own test suite (testdata/jsonata-suite of package jsonata, version 2.0.6) against the
// repository's JSONata evaluator: packages lang, stdlib and format together. It has no code besides its tests.
package suite
