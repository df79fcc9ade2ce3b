package templates

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCatalogsComplete fails on any message missing from a catalog or
// left empty: every language has every key.
func TestCatalogsComplete(t *testing.T) {
	for _, lang := range Langs {
		cat, ok := catalogs[lang]
		if !ok {
			t.Fatalf("no catalog for %s", lang)
		}
		for _, other := range Langs {
			for k := range catalogs[other] {
				if v, ok := cat[k]; !ok || v == "" {
					t.Errorf("%s lacks %q (in %s)", lang, k, other)
				}
			}
		}
	}
}

// TestParseLang reads Accept-Language style tags.
func TestParseLang(t *testing.T) {
	cases := []struct {
		note, tag string
		want      Lang
		ok        bool
	}{
		{note: "bare zh", tag: "zh", want: LangZH, ok: true},
		{note: "zh-CN", tag: "zh-CN", want: LangZH, ok: true},
		{note: "zh-Hans, any case", tag: "ZH-hans", want: LangZH, ok: true},
		{note: "en-US", tag: "en-US", want: LangEN, ok: true},
		{note: "unspoken", tag: "fr", ok: false},
	}
	for _, c := range cases {
		got, ok := ParseLang(c.tag)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: ParseLang(%q) = %q, %v; want %q, %v", c.note, c.tag, got, ok, c.want, c.ok)
		}
	}
	if got := T(WithLang(context.Background(), LangZH), "approvals.deny"); got != "拒绝" {
		t.Errorf("T zh approvals.deny = %q", got)
	}
}

// usedKey finds a literal message key passed to T, Tf or a web translator.
var usedKey = regexp.MustCompile(`(?:\bT\(ctx, |\bTf\(ctx, |\bT\(r\.Context\(\), |\bTf\(r\.Context\(\), |\bt\(|\btr\(|\bt\.f\()"([a-z][a-zA-Z0-9_./*-]*)"[,)]`)

// TestUsedKeysExist fails on a key the pages ask for that no catalog has:
// T would show the key itself, in every language.
func TestUsedKeysExist(t *testing.T) {
	files, _ := filepath.Glob("*.templ")
	more, _ := filepath.Glob("*.go")
	web, _ := filepath.Glob("../web/*.go")
	seen := 0
	for _, f := range append(append(files, more...), web...) {
		if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "_templ.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range usedKey.FindAllStringSubmatch(string(b), -1) {
			seen++
			if _, ok := messagesEN[m[1]]; !ok {
				t.Errorf("%s uses the message %q, which no catalog has", f, m[1])
			}
		}
	}
	if seen < 100 {
		t.Errorf("found only %d message keys in use; the pattern no longer matches the code", seen)
	}
}

// TestPreviewSummaryChinese: the impact preview's summary is in the
// page's language.
func TestPreviewSummaryChinese(t *testing.T) {
	pv := RulePreview{Ran: true, Replayed: 5, Calls: 3, Changes: []PreviewRow{{Count: 3}}}
	got := previewSummary(WithLang(context.Background(), LangZH), pv)
	if want := "已重放 5 条已记录的调用：其中 3 条的决定会改变（1 个不同的调用）。"; got != want {
		t.Errorf("zh summary: got %q, want %q", got, want)
	}
	got = previewSummary(context.Background(), pv)
	if want := "Replayed 5 logged calls: 3 would be decided differently (1 distinct call)."; got != want {
		t.Errorf("en summary: got %q, want %q", got, want)
	}
}

// TestLevelWords: levels and modes read in the page's language; a value
// the catalog does not know (a trace result, say) is shown as it is.
func TestLevelWords(t *testing.T) {
	zh := WithLang(context.Background(), LangZH)
	cases := []struct {
		note     string
		ctx      context.Context
		in, want string
	}{
		{note: "zh deny", ctx: zh, in: "deny", want: "拒绝"},
		{note: "zh strict mode", ctx: zh, in: "strict", want: "严格"},
		{note: "en ask", ctx: context.Background(), in: "ask", want: "ask"},
		{note: "unknown stays", ctx: zh, in: "matched", want: "matched"},
	}
	for _, c := range cases {
		if got := levelWord(c.ctx, c.in); got != c.want {
			t.Errorf("%s: levelWord(%q) = %q, want %q", c.note, c.in, got, c.want)
		}
	}
}
