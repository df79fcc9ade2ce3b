package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches an inline Markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// heading matches a Markdown heading line.
var heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)

// slug is GitHub's anchor for a heading: lower case, letters, digits,
// spaces turned into hyphens, hyphens and underscores kept.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown file, code blocks left out.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil && !inCode {
			out[slug(strings.ReplaceAll(m[1], "`", ""))] = true
		}
	}
	return out
}

// withoutCode drops fenced code blocks, whose text is not links.
func withoutCode(text string) string {
	var b strings.Builder
	inCode := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
			continue
		}
		if !inCode {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestRelativeLinksResolve checks every relative link of the README and of
// the pages in docs/: the file exists in the clone, and an #anchor names a
// heading of that file.
func TestRelativeLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	if len(pages) < 5 {
		t.Fatalf("found only %v", pages)
	}
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(withoutCode(string(text)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			resolved := page
			if file != "" {
				resolved = filepath.Join(filepath.Dir(page), file)
			}
			info, err := os.Stat(resolved)
			if err != nil {
				t.Errorf("%s: link %q: %v", page, target, err)
				continue
			}
			checked++
			if frag == "" || info.IsDir() || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			body, err := os.ReadFile(resolved)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(string(body))[frag] {
				t.Errorf("%s: link %q: no heading with anchor #%s in %s", page, target, frag, resolved)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link checked")
	}
}
