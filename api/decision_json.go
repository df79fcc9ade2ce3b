package api

import (
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/toolgate/toolgate/engine"
)

// The decision routes answer thousands of times a second, so their answer
// is appended by hand into a pooled buffer and written at once, instead of
// through a new encoding/json Encoder and reflection per answer. The bytes
// are exactly those writeJSON writes for decisionWire(d) (a test compares
// them on hard strings); a decision with a Trace (explain) goes through
// writeJSON, since the trace is rare and has many shapes.

// answerBufs are the buffers decision answers are built in.
var answerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooledAnswer is the largest buffer given back to answerBufs, so that
// one huge batch answer does not stay in memory.
const maxPooledAnswer = 1 << 20

// writeDecision answers one decision as EvaluateResponse, status 200.
func writeDecision(w http.ResponseWriter, d engine.Decision) {
	if len(d.Trace) > 0 {
		writeJSON(w, http.StatusOK, decisionWire(d))
		return
	}
	bp := answerBufs.Get().(*[]byte)
	b := append(appendDecision((*bp)[:0], d), '\n')
	writeJSONBytes(w, b)
	putAnswerBuf(bp, b)
}

// writeDecisions answers a batch as EvaluateBatchResponse, status 200.
func writeDecisions(w http.ResponseWriter, decisions []engine.Decision) {
	for i := range decisions {
		if len(decisions[i].Trace) > 0 {
			out := EvaluateBatchResponse{Decisions: make([]EvaluateResponse, len(decisions))}
			for i, d := range decisions {
				out.Decisions[i] = decisionWire(d)
			}
			writeJSON(w, http.StatusOK, out)
			return
		}
	}
	bp := answerBufs.Get().(*[]byte)
	b := append((*bp)[:0], `{"decisions":[`...)
	for i := range decisions {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendDecision(b, decisions[i])
	}
	b = append(b, "]}\n"...)
	writeJSONBytes(w, b)
	putAnswerBuf(bp, b)
}

func putAnswerBuf(bp *[]byte, b []byte) {
	if cap(b) <= maxPooledAnswer {
		*bp = b
		answerBufs.Put(bp)
	}
}

// writeJSONBytes writes an encoded JSON answer with writeJSON's headers.
func writeJSONBytes(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// appendDecision appends decisionWire(d) as encoding/json would encode it
// (field order, omitempty, null matched_rule), for a d without a Trace.
func appendDecision(b []byte, d engine.Decision) []byte {
	b = append(b, `{"level":`...)
	b = appendJSONString(b, d.Level.String())
	b = append(b, `,"matched_rule":`...)
	if d.MatchedRule == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, d.MatchedRule)
	}
	b = append(b, `,"reason":`...)
	b = appendJSONString(b, d.Reason)
	if len(d.ExternalPaths) > 0 {
		b = append(b, `,"external_paths":[`...)
		for i, p := range d.ExternalPaths {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, p)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json does with HTML
// escaping off (writeJSON's SetEscapeHTML(false)): \" \\ \b \f \n \r \t,
// other control bytes as \u00XX, invalid UTF-8 as \ufffd, and U+2028 and
// U+2029 escaped, since JavaScript reads them as line ends.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
