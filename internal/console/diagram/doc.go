// Package diagram draws an Amazon States Language definition as an SVG picture for the audit console: the states
// and their transitions, with what an execution did drawn over them — the states it entered, the one running now,
// the edges it took, its retries, the errors its Catch clauses caught and where it failed.
//
// Parse reads the definition, Graph.Layout places it once with a layered layout of its own, and Layout.SVG renders
// it with any number of different Marks. Parallel and Map states are drawn as boxes that hold their branches and
// item processors. Marks name states by their plain name, so two states of the same name in different machines of
// one definition are marked together.
package diagram
