package approval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// SignatureHeader carries the HMAC-SHA256 of a notification's body.
const SignatureHeader = "X-Toolgate-Signature"

// EventHeader names the event a notification is about.
const EventHeader = "X-Toolgate-Event"

// work is the worker of one URL: it posts its queue's notifications one at
// a time until the notifier closes.
func (n *Notifier) work(t *webhookTarget) {
	defer n.wg.Done()
	for {
		select {
		case <-n.ctx.Done():
			n.dropQueued(t, 0)
			return
		case a := <-t.queue:
			if n.ctx.Err() != nil { // both were ready: closing wins
				n.dropQueued(t, 1)
				return
			}
			n.deliver(t, a)
		}
	}
}

// dropQueued counts and logs what is left in a queue at Close, plus taken
// notifications already taken from it.
func (n *Notifier) dropQueued(t *webhookTarget, taken int) {
	left := taken
	for {
		select {
		case <-t.queue:
			left++
		default:
			if left > 0 {
				n.dropped.Add(uint64(left))
				n.opts.Logger.Warn("approval webhook: stopped with notifications undelivered", "webhook", t.host, "dropped", left)
			}
			return
		}
	}
}

// deliver posts one notification, retrying with backoff on network errors,
// 5xx, 408 and 429, up to Attempts tries.
func (n *Notifier) deliver(t *webhookTarget, a Approval) {
	body, err := n.body(t, a)
	if err != nil {
		n.failed.Add(1)
		n.opts.Logger.Error("approval webhook: cannot encode the notification", "approval", a.ID, "err", err)
		return
	}
	var lastErr error
	tries := 0
	for tries < n.opts.Attempts {
		if tries > 0 && !n.sleep(backoff(tries, n.opts.BaseDelay, n.opts.MaxDelay, n.opts.Jitter)) {
			break
		}
		tries++
		retry, err := n.post(t, body)
		if err == nil {
			n.sent.Add(1)
			return
		}
		lastErr = err
		if !retry {
			break
		}
	}
	if n.ctx.Err() != nil {
		n.opts.Logger.Warn("approval webhook: stopped before a notification was delivered", "webhook", t.host, "approval", a.ID)
		n.dropped.Add(1)
		return
	}
	// Logged before counted: whoever sees the count can find the line.
	n.opts.Logger.Warn("approval webhook: notification failed", "webhook", t.host, "approval", a.ID,
		"tries", tries, "err", lastErr)
	n.failed.Add(1)
}

// backoff is the wait before retry number n (1 for the first retry):
// exponential from base, capped at most, with "equal jitter" (between half
// and all of it) so that many servers retrying do not post in step.
func backoff(n int, base, most time.Duration, jitter func() float64) time.Duration {
	d := most
	if n-1 < 32 {
		if e := base << (n - 1); e > 0 && e < most {
			d = e
		}
	}
	half := d / 2
	return half + time.Duration(jitter()*float64(d-half))
}

// sleep waits d, or less if the notifier closes (then false).
func (n *Notifier) sleep(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-n.ctx.Done():
		return false
	}
}

// post makes one try. It reports whether a failure is worth retrying.
func (n *Notifier) post(t *webhookTarget, body []byte) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(n.ctx, n.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return false, errors.New("cannot build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "toolgate-approval-webhook")
	req.Header.Set(EventHeader, EventRequested)
	if len(n.opts.Secret) > 0 {
		req.Header.Set(SignatureHeader, SignWebhook(n.opts.Secret, body))
	}
	resp, err := n.opts.Client.Do(req)
	if err != nil {
		return true, withoutURL(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return false, nil
	case s >= 500, s == http.StatusTooManyRequests, s == http.StatusRequestTimeout:
		return true, fmt.Errorf("the receiver answered %d", s)
	default:
		return false, fmt.Errorf("the receiver answered %d (not retried)", s)
	}
}

// withoutURL drops the URL from an HTTP client error: the path of a Slack
// webhook (and a query token of others) is a secret the logs must not show.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
