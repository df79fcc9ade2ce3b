package web

import (
	"net/http"
	"net/url"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/store/auth"
)

// interleavedStore is the real store with one hook: the first Section or
// ETag read after arm is followed by fn, another person's edit arriving right after
// the page's ETag was read and before its write.
type interleavedStore struct {
	*inforce.Holder
	armed atomic.Bool
	fn    func()
}

func (s *interleavedStore) Section() (map[string]any, string, error) {
	sec, etag, err := s.Holder.Section()
	if s.armed.CompareAndSwap(true, false) {
		s.fn()
	}
	return sec, etag, err
}

// ETag is hooked the same way: service.Policy reads the ETag in force
// through it when the store has it.
func (s *interleavedStore) ETag() string {
	etag := s.Holder.ETag()
	if s.armed.CompareAndSwap(true, false) {
		s.fn()
	}
	return etag
}

var etagField = regexp.MustCompile(`name="etag" value="([^"]*)"`)

// TestEditBetweenCheckAndWriteIsNotLost: two admins opened the tools page at
// the same version; the second saves while the first's save is between
// reading the ETag and writing. One of them must get the conflict page, not
// both a success with one edit silently lost. (Before the pages wrote with
// If-Match, both answered 303 and the first's write erased the second's.)
func TestEditBetweenCheckAndWriteIsNotLost(t *testing.T) {
	var is *interleavedStore
	srv, st, tokens := testServerWith(t, func(st *inforce.Holder, tokens *auth.Tokens) Deps {
		is = &interleavedStore{Holder: st}
		return Deps{Policy: is, Tokens: tokens}
	})
	admin, _ := tokens.AdminToken()
	noRedirect := func(c *http.Client) *http.Client {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		return c
	}
	a, _, _ := login(t, srv, admin)
	b, _, _ := login(t, srv, admin)
	a, b = noRedirect(a), noRedirect(b)
	_, pageA := get(t, a, srv.URL+"/tools")
	_, pageB := get(t, b, srv.URL+"/tools")
	form := func(page, level string) url.Values {
		return url.Values{"csrf_token": {match(csrfField, page)}, "etag": {match(etagField, page)}, "tool": {"bash"}, "level": {level}}
	}
	statusB := make(chan int, 1)
	is.fn = func() {
		go func() {
			st, _ := post(t, b, srv.URL+"/tools", form(pageB, "deny"))
			statusB <- st
		}()
		// Give B's save the time to land (it does at once when nothing
		// orders it after A's).
		select {
		case st := <-statusB:
			statusB <- st
		case <-time.After(300 * time.Millisecond):
		}
	}
	is.armed.Store(true)
	stA, _ := post(t, a, srv.URL+"/tools", form(pageA, "allow"))
	var stB int
	select {
	case stB = <-statusB:
	case <-time.After(10 * time.Second):
		t.Fatal("the second save never answered")
	}
	sec, _, _ := st.Section()
	level := asMap(sec["tools"])["bash"]
	t.Logf("first save %d, second save %d, bash is %v", stA, stB, level)
	if stA == http.StatusSeeOther && stB == http.StatusSeeOther {
		t.Fatalf("both saves answered success and bash is %v: one edit was silently lost", level)
	}
	if stA != http.StatusConflict && stB != http.StatusConflict {
		t.Errorf("got %d and %d, want one save to answer 409 (the conflict page)", stA, stB)
	}
	want := "allow"
	if stA == http.StatusConflict {
		want = "deny"
	}
	if level != want {
		t.Errorf("bash is %v, want %s (the save that succeeded)", level, want)
	}
}
