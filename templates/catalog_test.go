package templates

import (
	"context"
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
