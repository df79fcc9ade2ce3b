package mcpgate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestPeekID: the id is found wherever the object puts it, past strings
// and nested values that hold "id" themselves; a message the skip cannot
// vouch for is left to the decoder.
func TestPeekID(t *testing.T) {
	cases := []struct {
		note string
		line string
		id   string // "" for none
		sure bool
	}{
		{note: "id first", line: `{"id":3,"result":{}}`, id: "3", sure: true},
		{note: "id last, after a nested id", line: `{"result":{"id":9,"x":[{"id":8}]},"id":"l"}`, id: `"l"`, sure: true},
		{note: "an id inside a string", line: `{"result":{"text":"\"id\":7, \\\"}"},"jsonrpc":"2.0"}`, sure: true},
		{note: "escaped quotes before the id", line: `{"result":"a\\\\","id":4}`, id: "4", sure: true},
		{note: "spaces everywhere", line: " { \"jsonrpc\" : \"2.0\" , \"id\" : 12 } \n", id: "12", sure: true},
		{note: "a null id is none", line: `{"id":null,"error":{}}`, sure: true},
		{note: "the last of two ids counts", line: `{"id":1,"id":2}`, id: "2", sure: true},
		{note: "an empty object", line: `{}`, sure: true},
		{note: "a member name with an escape might spell id", line: `{"\u0069d":7,"result":{}}`},
		{note: "a batch", line: `[{"id":1}]`},
		{note: "cut short", line: `{"id":1,"result":{"tools":[`},
		{note: "a string never closed", line: `{"result":"abc`},
		{note: "trailing bytes", line: `{"id":1} {"id":2}`},
	}
	for _, c := range cases {
		t.Run(c.note, func(t *testing.T) {
			id, sure := peekID([]byte(c.line))
			if sure != c.sure || string(id) != c.id {
				t.Errorf("peekID(%s) = %q, %v; want %q, %v", c.line, id, sure, c.id, c.sure)
			}
		})
	}
}

// largeAnswer is an answer to id like read_text_file's to a 1 MiB file:
// the text twice, and text that looks like a tools/list answer to id "l".
func largeAnswer(id string) string {
	text := strings.Repeat(`line {"jsonrpc":"2.0","id":"l","result":{"tools":[{"name":"write_file"}]}}`+"\n", 1<<20/80)
	quoted, _ := json.Marshal(text)
	return `{"result":{"content":[{"type":"text","text":` + string(quoted) + `}],"structuredContent":{"content":` + string(quoted) + `}},"jsonrpc":"2.0","id":` + id + `}`
}

// TestGateFiltersToolsListAmongLargeAnswers: while tools/list requests
// are pending, large answers to other requests pass byte for byte, and
// the tools/list answers are filtered however they write their id: last,
// as 7.0 for 7, escaped, or under an escaped member name.
func TestGateFiltersToolsListAmongLargeAnswers(t *testing.T) {
	d := &policyDecider{hidden: map[string]bool{"write_file": true}}
	h := newHarness(t, d)
	for _, id := range []string{`"l"`, `7`, `"a1"`, `"n"`} {
		h.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list"}`)
		next(t, h.server, "the server")
	}
	list := `"result":{"tools":[{"name":"read_file"},{"name":"write_file"}]}`
	lines := []struct {
		note string
		line string
		list bool
	}{
		{note: "a large answer", line: largeAnswer("1")},
		{note: "tools/list answered with its id last", line: `{"jsonrpc":"2.0",` + list + `,"id":"l"}`, list: true},
		{note: "a large answer", line: largeAnswer("2")},
		{note: "tools/list answered with 7.0 for 7", line: `{` + list + `,"id":7.0}`, list: true},
		{note: "a large answer", line: largeAnswer(`"x"`)},
		{note: "tools/list answered with an escaped id", line: `{"id":"\u00611",` + list + `}`, list: true},
		{note: "tools/list answered under an escaped member name", line: `{"\u0069d":"n",` + list + `}`, list: true},
		{note: "a large answer once none is pending", line: largeAnswer("3")},
	}
	go func() {
		for _, l := range lines {
			io.WriteString(h.answer, l.line+"\n")
		}
	}()
	for _, l := range lines {
		got := next(t, h.toClient, "the client")
		switch {
		case l.list && (strings.Contains(got, "write_file") || !strings.Contains(got, "read_file")):
			t.Errorf("%s: passed unfiltered: %s", l.note, got)
		case !l.list && got != l.line:
			t.Errorf("%s: changed on the way (%d bytes, want %d)", l.note, len(got), len(l.line))
		}
	}
}

// BenchmarkGateRelaysLargeAnswer relays answers like read_text_file's to
// a 1 MiB file from the server to the client, with no tools/list pending
// and with one pending (whose answer never comes).
func BenchmarkGateRelaysLargeAnswer(b *testing.B) {
	line := []byte(largeAnswer("5") + "\n")
	for _, pending := range []bool{false, true} {
		name := "none pending"
		if pending {
			name = "tools list pending"
		}
		b.Run(name, func(b *testing.B) {
			client := ""
			started := make(chan struct{})
			if pending {
				client = `{"jsonrpc":"2.0","id":"l","method":"tools/list"}` + "\n"
			} else {
				close(started)
			}
			server := &repeatReader{line: line, n: b.N, start: started}
			toServer := &firstWrite{done: started, pending: pending}
			g := &Gate{Decider: &policyDecider{}}
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			b.ResetTimer()
			if err := g.Run(context.Background(), strings.NewReader(client), io.Discard, bufio.NewReaderSize(server, 64<<10), toServer); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// repeatReader reads as n copies of line, once start is closed.
type repeatReader struct {
	line  []byte
	n     int
	start chan struct{}
	rest  []byte
}

func (r *repeatReader) Read(p []byte) (int, error) {
	<-r.start
	if len(r.rest) == 0 {
		if r.n == 0 {
			return 0, io.EOF
		}
		r.n--
		r.rest = r.line
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// firstWrite closes done at the first message the server is sent.
type firstWrite struct {
	done    chan struct{}
	pending bool
	buf     bytes.Buffer
}

func (f *firstWrite) Write(p []byte) (int, error) {
	if f.pending && f.buf.Len() == 0 {
		defer close(f.done)
	}
	return f.buf.Write(p)
}
