//go:build !race

package transfer

// raceDetector says whether the test binary runs under the race detector, which makes each operation of the
// randomized test about twice as expensive.
const raceDetector = false
