package web

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/templates"
)

func TestAcceptLang(t *testing.T) {
	cases := []struct {
		note, header string
		want         templates.Lang
	}{
		{note: "empty", header: "", want: templates.LangEN},
		{note: "Chinese first", header: "zh-CN,zh;q=0.9,en;q=0.8", want: templates.LangZH},
		{note: "English preferred by weight", header: "zh;q=0.5, en-US", want: templates.LangEN},
		{note: "only unspoken languages", header: "fr-FR,de", want: templates.LangEN},
		{note: "unspoken first, Chinese next", header: "fr,zh-TW;q=0.7", want: templates.LangZH},
	}
	for _, c := range cases {
		if got := acceptLang(c.header); got != c.want {
			t.Errorf("%s: acceptLang(%q) = %q, want %q", c.note, c.header, got, c.want)
		}
	}
}

func TestSetLangStaysLocal(t *testing.T) {
	cases := []struct{ note, back, want string }{
		{note: "a page", back: "/approvals", want: "/approvals"},
		{note: "another site", back: "//evil.example/x", want: "/"},
		{note: "a full URL", back: "https://evil.example", want: "/"},
	}
	for _, c := range cases {
		w := httptest.NewRecorder()
		setLang(w, httptest.NewRequest(http.MethodGet, "/lang?to=zh-CN&back="+c.back, nil))
		if got := w.Header().Get("Location"); got != c.want {
			t.Errorf("%s: Location %q, want %q", c.note, got, c.want)
		}
		if got := w.Result().Cookies(); len(got) != 1 || got[0].Value != "zh-CN" {
			t.Errorf("%s: cookies %v, want toolgate_lang=zh-CN", c.note, got)
		}
	}
}
