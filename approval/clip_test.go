package approval_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/engine"
)

// TestAnsweredAskKeepsClippedArgs: once answered, an ask keeps its long
// argument strings cut (nested ones too), saying how much was left out,
// while the waiting ask had them whole.
func TestAnsweredAskKeepsClippedArgs(t *testing.T) {
	m := newManager(t, approval.Options{})
	long := strings.Repeat("x", 64<<10)
	req := engine.Request{Call: engine.NewCall("write_file", map[string]any{"path": "/w/a", "content": long, "parts": []any{map[string]any{"text": long}}}), ChannelID: "web", Workspace: "/w"}
	a := mustCreate(t, m, req, "s1")
	if a.Request.ToolArgs["content"] != long {
		t.Fatal("the waiting ask does not hold its content whole")
	}
	got, err := m.Decide(context.Background(), a.ID, approval.ChoiceDeny, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := m.Get(got.ID)
	args := kept.Request.ToolArgs
	nested := args["parts"].([]any)[0].(map[string]any)["text"]
	for note, v := range map[string]any{"content": args["content"], "nested text": nested} {
		s, _ := v.(string)
		if len(s) > 5<<10 || !strings.HasSuffix(s, "more bytes not shown]") {
			t.Errorf("%s of the answered ask: %d bytes ending %q; want it cut to about 4 KiB with a note", note, len(s), s[max(0, len(s)-40):])
		}
	}
	if args["path"] != "/w/a" {
		t.Errorf("path: %v, want it whole", args["path"])
	}
}
