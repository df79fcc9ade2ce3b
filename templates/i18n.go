package templates

import (
	"context"
	"fmt"
	"strings"
)

// Lang is a language the pages speak.
type Lang string

// The languages of the pages. JiuwenSwarm's users write Chinese; English
// is the fallback.
const (
	LangEN Lang = "en"
	LangZH Lang = "zh-CN"
)

// Langs are the languages offered, in the switcher's order.
var Langs = []Lang{LangEN, LangZH}

type langKey struct{}

// WithLang returns a context whose pages render in lang.
func WithLang(ctx context.Context, lang Lang) context.Context {
	return context.WithValue(ctx, langKey{}, lang)
}

// LangOf is the language of a context, English when none was chosen.
func LangOf(ctx context.Context) Lang {
	if l, ok := ctx.Value(langKey{}).(Lang); ok {
		return l
	}
	return LangEN
}

// ParseLang reads a language tag (zh, zh-CN, zh-Hans, en-US...); ok is
// false for a language the pages do not speak.
func ParseLang(tag string) (Lang, bool) {
	tag = strings.ToLower(strings.TrimSpace(tag))
	switch {
	case tag == "zh" || strings.HasPrefix(tag, "zh-"):
		return LangZH, true
	case tag == "en" || strings.HasPrefix(tag, "en-"):
		return LangEN, true
	}
	return "", false
}

// T is the message key in the context's language. A key missing from a
// catalog shows as the key itself, which catalog_test.go prevents.
func T(ctx context.Context, key string) string {
	if s, ok := catalogs[LangOf(ctx)][key]; ok {
		return s
	}
	if s, ok := catalogs[LangEN][key]; ok {
		return s
	}
	return key
}

// Tf is the message key in the context's language with args put in its
// verbs (fmt's %s, %d, %q; %[n]s lets a language reorder them).
func Tf(ctx context.Context, key string, args ...any) string {
	return fmt.Sprintf(T(ctx, key), args...)
}

// catalogs are the pages' messages by language; every catalog has the
// same keys (catalog_test.go).
var catalogs = map[Lang]map[string]string{LangEN: messagesEN, LangZH: messagesZH}
