package engine

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// stdCanonical is encoding/json's writing of v, HTML escaping off.
func stdCanonical(t testing.TB, v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// canonicalPieces are strings and numbers that exercise every escape and
// number form.
var canonicalPieces = []any{"", "a", `q"uote`, `back\slash`, "<tag>&amp;", "tab\tnl\nret\rbs\bff\f", "\x00\x01\x1f\x7f",
	"日本語", "\u2028\u2029", "\xff\xfe bad", "é\xc3", "🙂", 0.0, math.Copysign(0, -1), 1.0, -1.5, 1e-7, 1e-6, 123456789.0, 1e20, 1e21, 1.5e300, 5e-324,
	math.MaxFloat64, 0.1, 100.0, 3.14159, true, false, nil}

// randomValue builds a random JSON value of depth at most d.
func randomValue(r *rand.Rand, d int) any {
	switch n := r.IntN(10); {
	case d > 0 && n < 2:
		m := map[string]any{}
		for range r.IntN(20) {
			k, _ := canonicalPieces[r.IntN(12)].(string)
			m[k+string(rune('a'+r.IntN(26)))] = randomValue(r, d-1)
		}
		return m
	case d > 0 && n < 4:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, d-1)
		}
		return l
	case n < 5:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30))
	}
	return canonicalPieces[r.IntN(len(canonicalPieces))]
}

// TestCanonicalMatchesEncodingJSON: the writer without reflection writes
// every value byte for byte as encoding/json does, on the edge cases and
// on random nested arguments.
func TestCanonicalMatchesEncodingJSON(t *testing.T) {
	check := func(args map[string]any) {
		t.Helper()
		got, ok := appendCanonical(nil, args)
		if want := stdCanonical(t, args); !ok || string(got) != want {
			t.Fatalf("appendCanonical %q (ok %v), encoding/json %q", got, ok, want)
		}
	}
	for _, p := range canonicalPieces {
		check(map[string]any{"v": p, "list": []any{p}, "strings": []string{"x", "<y>"}})
	}
	r := rand.New(rand.NewPCG(7, 11))
	for range 5000 {
		args, _ := randomValue(r, 4).(map[string]any)
		if args == nil {
			args = map[string]any{"v": randomValue(r, 3)}
		}
		check(args)
	}
}

// TestCanonicalFallsBack: a value the writer does not know, or a number
// JSON cannot write, leaves it to encoding/json (which writes the one and
// reports the other).
func TestCanonicalFallsBack(t *testing.T) {
	cases := []struct {
		note string
		args map[string]any
		want string
		err  bool
	}{
		{"an int", map[string]any{"n": 3}, `{"n":3}`, false},
		{"a nested map of strings", map[string]any{"m": map[string]string{"b": "1", "a": "<2>"}}, `{"m":{"a":"<2>","b":"1"}}`, false},
		{"NaN", map[string]any{"n": math.NaN()}, "", true},
		{"an infinity in a list", map[string]any{"l": []any{math.Inf(1)}}, "", true},
	}
	for _, c := range cases {
		got, err := CanonicalArgs(c.args)
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: %q, %v; want %q (error %v)", c.note, got, err, c.want, c.err)
		}
	}
}

// FuzzCanonicalString: any string is written as encoding/json writes it.
func FuzzCanonicalString(f *testing.F) {
	for _, p := range canonicalPieces {
		if s, ok := p.(string); ok {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := map[string]any{s: s}
		if got, _ := appendCanonical(nil, args); string(got) != stdCanonical(t, args) {
			t.Fatalf("%q: %q, want %q", s, got, stdCanonical(t, args))
		}
	})
}
