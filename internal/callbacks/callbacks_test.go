package callbacks

import (
	"slices"
	"testing"
)

func TestListCallsInOrderAndLetsACallbackAdd(t *testing.T) {
	var l List
	var got []int
	l.Add(func() { got = append(got, 1) })
	l.Add(func() {
		got = append(got, 2)
		l.Add(func() { got = append(got, 3) }) // runs from the next Call on
	})
	l.Call()
	if want := []int{1, 2}; !slices.Equal(got, want) {
		t.Fatalf("first Call ran %v, want %v", got, want)
	}
	got = nil
	l.Call()
	if want := []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("second Call ran %v, want %v", got, want)
	}
}

func TestCallOnceRunsEachFunctionOnce(t *testing.T) {
	var l List
	var got []int
	l.Add(func() { got = append(got, 1) })
	l.Add(func() {
		got = append(got, 2)
		l.Add(func() { got = append(got, 3) }) // waits for the next CallOnce
	})
	l.CallOnce()
	if want := []int{1, 2}; !slices.Equal(got, want) {
		t.Fatalf("first CallOnce ran %v, want %v", got, want)
	}
	got = nil
	l.CallOnce()
	if want := []int{3}; !slices.Equal(got, want) {
		t.Fatalf("second CallOnce ran %v, want %v", got, want)
	}
	got = nil
	l.CallOnce()
	if len(got) != 0 {
		t.Fatalf("third CallOnce ran %v, want nothing", got)
	}
}
