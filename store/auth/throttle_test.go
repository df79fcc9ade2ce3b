package auth

import (
	"fmt"
	"testing"
	"time"
)

// TestThrottle checks the window: refused after the burst, free again when
// the window ends, per client, and bounded in what it remembers.
func TestThrottle(t *testing.T) {
	now := time.Unix(0, 0)
	th := NewThrottle(3, time.Minute)
	th.now = func() time.Time { return now }
	for range 3 {
		if _, blocked := th.Blocked("10.0.0.1"); blocked {
			t.Fatal("blocked before the burst")
		}
		th.Failed("10.0.0.1")
	}
	if left, blocked := th.Blocked("10.0.0.1"); !blocked || left != time.Minute {
		t.Errorf("after the burst: %v %v", left, blocked)
	}
	if _, blocked := th.Blocked("10.0.0.2"); blocked {
		t.Error("another client is blocked")
	}
	now = now.Add(61 * time.Second)
	if _, blocked := th.Blocked("10.0.0.1"); blocked {
		t.Error("still blocked after the window")
	}
	for i := range maxThrottled + 10 {
		th.Failed(fmt.Sprintf("c%d", i))
	}
	if len(th.clients) > maxThrottled {
		t.Errorf("remembers %d clients", len(th.clients))
	}
}
