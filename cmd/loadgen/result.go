package main

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// requestTimeout fails a request that has had no answer for this long.
const requestTimeout = 30 * time.Second

// result is what a transport measured.
type result struct {
	hist               *hdrhistogram.Histogram // latency in µs
	requests, failures int64
}

func newResult() result {
	return result{hist: hdrhistogram.New(1, int64(requestTimeout/time.Microsecond)*2, 3)}
}

// record counts one answered (or failed) request and its latency.
func (r *result) record(latency time.Duration, ok bool) {
	_ = r.hist.RecordValue(latency.Microseconds())
	r.requests++
	if !ok {
		r.failures++
	}
}

// merge adds o to r.
func (r *result) merge(o result) {
	r.hist.Merge(o.hist)
	r.requests += o.requests
	r.failures += o.failures
}
