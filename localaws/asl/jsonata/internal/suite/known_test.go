package suite

// loneSurrogate is why the cases that pass a lone UTF-16 surrogate ("\uD800") differ: Go strings are UTF-8, and
// decoding JSON replaces a lone surrogate with U+FFFD, so the function receives a valid character and encodes it.
// The engine reads every input, variable and definition as JSON into Go strings, so an expression of a state never
// sees a lone surrogate either.
const loneSurrogate = "a lone surrogate cannot be held in a Go string: JSON decoding makes it U+FFFD"

// knownDifferences are the suite's cases the evaluator does not pass, by name (group/file, #index within a file of
// several), each with its reason.
var knownDifferences = map[string]string{
	"function-encodeUrl/case002":          loneSurrogate,
	"function-encodeUrlComponent/case002": loneSurrogate,
}
