package main

import (
	"sync"
	"time"
)

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
