// Package metrics writes CloudWatch metrics as Embedded Metric Format (EMF) records: one JSON object a line, which
// CloudWatch Logs turns into metrics when it reads the line from a function's log stream. A Lambda function only has
// to write the line to standard output; there is no agent, no CloudWatch client, no credentials and no API call.
//
// An Emitter writes each Record with a single Write to its io.Writer, under a lock, so records from concurrent
// goroutines never interleave; lines written by log/slog handlers to the same *os.File do not interleave with them
// either, since every Write to an *os.File is serialised by the file itself. Emit validates the record against AWS's
// "Specification: Embedded metric format" before writing and writes nothing when it breaks a rule: at most 100
// metrics per metric directive, at most 30 dimension keys per dimension set, at least one dimension set per metric,
// every dimension key a root member with a string value of 1 to 1024 characters, every metric value a finite
// number, the unit one of CloudWatch's, root member names unique. A broken rule is a programming error; CloudWatch
// would drop the metrics silently, and an error that says which rule is easier to find.
//
// # Why not a library
//
// AWS publishes EMF client libraries for Java, Node.js, Python and .NET, but none for Go. Of the community modules,
// github.com/prozz/aws-embedded-metrics-golang is the only one the module proxy serves here (v1.2.0 of 2021-09-30,
// "go 1.14"; every later version and the maintained fork github.com/dangrier/aws-embedded-metrics-golang answer
// 403 Forbidden, and the fork's current releases need Go 1.27). It is not maintained (no release since 2021), its
// Logger is not safe for concurrent use (its issue #15, concurrent map writes), metric values are untyped, and it
// adds Lambda dimensions of its own unless told not to. What this project needs is small (one directive a dimension
// set, string dimensions, numeric values, string properties), so it is written here and tested against the
// specification's rules by an independent checker, package metricstest.
package metrics
