package api

import (
	"net/http"
	"sync"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/internal/jsontext"
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
	b = jsontext.AppendString(b, d.Level.String())
	b = append(b, `,"matched_rule":`...)
	if d.MatchedRule == "" {
		b = append(b, "null"...)
	} else {
		b = jsontext.AppendString(b, d.MatchedRule)
	}
	b = append(b, `,"reason":`...)
	b = jsontext.AppendString(b, d.Reason)
	if len(d.ExternalPaths) > 0 {
		b = append(b, `,"external_paths":[`...)
		for i, p := range d.ExternalPaths {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(b, p)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
