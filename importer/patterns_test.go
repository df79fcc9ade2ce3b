package importer

import (
	"regexp"
	"strings"
	"testing"
)

func TestGitignoreRegexp(t *testing.T) {
	for _, c := range []struct {
		note, base, pattern string
		yes, no             []string
	}{
		{note: "* stays in one segment", base: "/p", pattern: "/src/*.ts",
			yes: []string{"/p/src/a.ts", "/p/src/a.ts/inner"}, no: []string{"/p/src/a/b.ts", "/p/srcx/a.ts", "/q/src/a.ts"}},
		{note: "** spans segments, also none", base: "/p", pattern: "/src/**/*.ts",
			yes: []string{"/p/src/a.ts", "/p/src/a/b/c.ts"}, no: []string{"/p/lib/a.ts", "/p/src/a.go"}},
		{note: "a trailing /** is everything under", base: "/p", pattern: "/secrets/**",
			yes: []string{"/p/secrets/k", "/p/secrets/a/b"}, no: []string{"/p/secrets", "/p/secretsx/k"}},
		{note: "a slash-free pattern matches at any depth", base: "/p", pattern: ".env",
			yes: []string{"/p/.env", "/p/a/b/.env"}, no: []string{"/p/.envrc", "/x/.env"}},
		{note: "a trailing slash is a directory's contents only", base: "/p", pattern: "/build/",
			yes: []string{"/p/build/x"}, no: []string{"/p/build"}},
		{note: "? is one character of a segment, [!x] a negated class", base: "/p", pattern: "/a?/[!b]c",
			yes: []string{"/p/ax/ac"}, no: []string{"/p/a/x/ac", "/p/ax/bc"}},
		{note: "regexp characters are literal", base: "/p (1)", pattern: "/a+b.(c)",
			yes: []string{"/p (1)/a+b.(c)"}, no: []string{"/p (1)/aab.(c)", "/p 1/a+b.(c)"}},
		{note: "the root as base", base: "/", pattern: "/tmp/scratch.txt",
			yes: []string{"/tmp/scratch.txt"}, no: []string{"/tmp/scratch.txt2", "//tmp/scratch.txt"}},
	} {
		t.Run(c.note, func(t *testing.T) {
			p := gitignoreRegexp(c.base, c.pattern)
			re := regexp.MustCompile(strings.TrimPrefix(p, "re:"))
			for _, s := range c.yes {
				if !re.MatchString(s) {
					t.Errorf("%s does not match %s", p, s)
				}
			}
			for _, s := range c.no {
				if re.MatchString(s) {
					t.Errorf("%s matches %s", p, s)
				}
			}
		})
	}
}

func TestGlobsMeet(t *testing.T) {
	for _, c := range []struct {
		note string
		p, q string
		want bool
	}{
		{"a prefix and a longer one", "git *", "git status *", true},
		{"different words", "rm *", "grep *", false},
		{"a star in the middle", "git * main", "git push *", true},
		{"? against a letter", "ls ?", "ls a", true},
		{"? against nothing", "ls ?", "ls ", false},
		{"literal texts", "make", "make", true},
		{"literal texts that differ", "make", "maker", false},
		{"two stars", "*a*", "*b*", true},
		{"a star cannot be shorter than a literal tail", "*.go", "*.ts", false},
	} {
		if got := globsMeet(c.p, c.q); got != c.want {
			t.Errorf("%s: globsMeet(%q, %q) = %v", c.note, c.p, c.q, got)
		}
		if got := globsMeet(c.q, c.p); got != c.want {
			t.Errorf("%s: globsMeet(%q, %q) = %v (reversed)", c.note, c.q, c.p, got)
		}
	}
}

func TestStripJSONC(t *testing.T) {
	in := `{
  // a comment "with quotes"
  "a": "http://x/*not a comment*/", /* block */
  "b": [1, 2,],
  "c": {"d": "e",},
}`
	v, err := orderedJSON(stripJSONC([]byte(in)))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*ordered)
	if strings.Join(o.keys, ",") != "a,b,c" || o.vals["a"] != "http://x/*not a comment*/" {
		t.Errorf("keys %v, a = %v", o.keys, o.vals["a"])
	}
}

func TestHostRegexp(t *testing.T) {
	re := regexp.MustCompile(strings.TrimPrefix(hostRegexp("example.com"), "re:"))
	for _, c := range []struct {
		json string
		want bool
	}{
		{`{"prompt":"x","url":"https://example.com"}`, true},
		{`{"prompt":"x","url":"https://EXAMPLE.com:8443/a?b#c"}`, true},
		{`{"url":"http://example.com/"}`, true},
		{`{"prompt":"x","url":"https://example.com.evil.net/"}`, false},
		{`{"prompt":"x","url":"https://example.com@evil.net/"}`, false},
		{`{"prompt":"x","url":"https://notexample.com/"}`, false},
		{`{"prompt":"\"url\":\"https://example.com/","url":"https://evil.net/"}`, false},
	} {
		if got := re.MatchString(c.json); got != c.want {
			t.Errorf("%s: %v, want %v", c.json, got, c.want)
		}
	}
}
