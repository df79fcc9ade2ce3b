package store

import (
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestNormalizeKeysThatPrintAlike: a mapping whose keys print alike (1 and
// "1", .nan and NaN, two NaNs) reads the same every time; before, Go's map
// order chose the value, so one file could load as two policies.
func TestNormalizeKeysThatPrintAlike(t *testing.T) {
	for _, tc := range []struct {
		note, text string
	}{
		{note: "int and string", text: "m: {0x1: a, \"1\": b, 2: c}\n"},
		{note: "float and int", text: "m: {1.0: a, 0x1: b}\n"},
		{note: "float and string", text: "m: {.nan: a, NaN: b}\n"},
		{note: "two NaNs", text: "m: {.nan: a, .NaN: b}\n"},
		{note: "bool and string", text: "m: {True: a, \"true\": b}\n"},
	} {
		t.Run(tc.note, func(t *testing.T) {
			var first string
			for i := range 50 {
				var v any
				if err := yaml.Unmarshal([]byte(tc.text), &v); err != nil {
					t.Fatal(err)
				}
				got := fmt.Sprint(normalize(v))
				if i == 0 {
					first = got
				} else if got != first {
					t.Fatalf("run %d read %s, run 0 read %s", i, got, first)
				}
			}
		})
	}
}
