// Package peers measures toolgate's engine side by side with the two
// engines people pick instead, OPA (Rego) and cedar-go, on the same policy
// and the same calls: it generates one policy of n user rules, writes it
// for each engine as that engine's experts would, checks that every engine
// decides every call as toolgate does, and times them in interleaved
// rounds.
//
// It owns the peer policies, their adapters, the call shapes and the
// timing. It does not own toolgate's own benchmarks (engine/*_bench_test.go)
// nor any decision rule: toolgate's answer is the expected one. It is a
// module of its own so that the service's go.mod never depends on OPA or
// Cedar. It builds against the repository's engine (a replace of the root
// module), so when the root module's requirements change, `go mod tidy`
// here brings its go.sum along.
package peers
