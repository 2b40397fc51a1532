// Package docexample reads the shell examples of a Markdown document and checks what they print, so that a document
// can be run as a test (e2e's TestDocs runs docs/api.md and docs/transferctl.md against a fresh local stack).
//
// The convention (docs/README.md): a fenced block with info string "sh" is run; "sh skip-test" is shown, not run. A
// block right after an "sh" block (only blank lines between) with info string "text expect" or "json expect" is
// checked against that block's standard output: MatchText and MatchJSON give the rules, where "…" is a wildcard.
// Parse finds the blocks and pairs them; Session runs a document's blocks in order in one bash with
// set -euo pipefail and returns each block's output; Check compares an output with its expectation.
package docexample
