package main

import (
	"sync"
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

// runGoroutines is the goroutines transport: each connection is a
// goroutine with a rawConn that sends, waits for the answer and sends again
// (closed loop), or sleeps until its next request is due (open loop).
// Requests still in flight at end are not counted.
func runGoroutines(c config, host string, reqs [][]byte, start, end time.Time) result {
	var mu sync.Mutex
	total := newResult()
	var wg sync.WaitGroup
	for w := 0; w < c.conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			res := newResult()
			conn := &rawConn{addr: host}
			defer func() {
				if conn.conn != nil {
					conn.conn.Close()
				}
			}()
			sched := newSchedule(c, w, start)
			for i := w; ; i++ {
				due, ok := sched.next(end)
				if !ok {
					break
				}
				status, err := conn.do(reqs[i%len(reqs)], due.Add(requestTimeout))
				if !time.Now().Before(end) {
					break
				}
				res.record(time.Since(due), err == nil && status == 200)
			}
			mu.Lock()
			total.merge(res)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	return total
}
