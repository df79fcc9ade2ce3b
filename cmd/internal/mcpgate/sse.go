package mcpgate

import (
	"bufio"
	"bytes"
	"io"
)

// filterEvents passes a server-sent event stream through, event by event
// as each ends, rewriting the message an event carries when rewrite says
// so; every other byte (ids, which resumption uses, comments, retry
// hints) passes as it came. An event longer than a message may be passes
// unread.
func filterEvents(body io.ReadCloser, rewrite func(data []byte) ([]byte, bool)) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(copyEvents(pw, body, rewrite))
	}()
	return &eventStream{PipeReader: pr, upstream: body}
}

// eventStream is the filtered stream; closing it closes the upstream's.
type eventStream struct {
	*io.PipeReader
	upstream io.Closer
}

func (e *eventStream) Close() error {
	e.PipeReader.Close()
	return e.upstream.Close()
}

// copyEvents copies events from r to w, rewriting their data.
func copyEvents(w io.Writer, r io.Reader, rewrite func([]byte) ([]byte, bool)) error {
	br := bufio.NewReader(r)
	var ev event
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull && ev.raw.Len()+len(line) <= maxLine {
			continue // a long line: read on
		}
		if len(line) > 0 {
			if werr := ev.add(w, line, err == bufio.ErrBufferFull, rewrite); werr != nil {
				return werr
			}
			line = line[:0]
		}
		switch {
		case err == nil || err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			_, werr := w.Write(ev.raw.Bytes())
			return werr
		default:
			return err
		}
	}
}

// event is the event being read: its lines as they came, and its data.
type event struct {
	raw    bytes.Buffer // every line of the event
	fields bytes.Buffer // its lines but data lines
	data   [][]byte
	// unread is set past what the gate reads (an event longer than a
	// message): the rest of the event passes unread; midLine when the
	// last part written did not end its line.
	unread, midLine bool
}

// add takes one line, or the part of one longer than the gate reads when
// partial, and writes the event out when the line ends it.
func (e *event) add(w io.Writer, line []byte, partial bool, rewrite func([]byte) ([]byte, bool)) error {
	if e.unread || partial {
		if !e.unread {
			if _, err := w.Write(e.raw.Bytes()); err != nil {
				return err
			}
			e.reset()
			e.unread = true
		}
		ends := !e.midLine && !partial && isBlank(line)
		e.midLine = partial
		if ends {
			e.unread = false
		}
		_, err := w.Write(line)
		return err
	}
	e.raw.Write(line)
	if !isBlank(line) {
		text := bytes.TrimRight(line, "\r\n")
		if v, ok := bytes.CutPrefix(text, []byte("data")); ok && (len(v) == 0 || v[0] == ':') {
			v = bytes.TrimPrefix(bytes.TrimPrefix(v, []byte(":")), []byte(" "))
			e.data = append(e.data, bytes.Clone(v))
		} else {
			e.fields.Write(line)
		}
		return nil
	}
	out := e.raw.Bytes()
	if len(e.data) > 0 {
		if msg, ok := rewrite(bytes.Join(e.data, []byte("\n"))); ok {
			out = append(append(append(e.fields.Bytes(), "data: "...), msg...), "\n\n"...)
		}
	}
	_, err := w.Write(out)
	e.reset()
	return err
}

func (e *event) reset() {
	e.raw.Reset()
	e.fields.Reset()
	e.data = e.data[:0]
}

// isBlank reports whether a line is empty: it ends an event.
func isBlank(line []byte) bool { return len(bytes.TrimRight(line, "\r\n")) == 0 }
