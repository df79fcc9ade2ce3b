package web

import (
	"bytes"
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/templates"
)

// chinese is the translator of a zh-CN page.
var chinese = translatorFor(templates.WithLang(context.Background(), templates.LangZH))

// TestPagesSpeakChinese: a person who chose zh-CN reads every area's form
// checks and "Not saved" messages in Chinese, around the data they carry;
// the same request in English still reads English.
func TestPagesSpeakChinese(t *testing.T) {
	srv, st, tokens := testServer(t)
	_, tok, _ := tokens.Create("ada", auth.RoleAdmin, nil, nil)
	zh, status, _ := login(t, srv, tok)
	if status != http.StatusOK {
		t.Fatalf("admin login: status %d", status)
	}
	en, _, _ := login(t, srv, tok)
	if code, _ := get(t, zh, srv.URL+"/lang?to=zh-CN&back=/rules"); code != http.StatusOK {
		t.Fatalf("switching to zh-CN: status %d", code)
	}
	_, page := get(t, zh, srv.URL+"/rules")
	csrf := match(csrfField, page)
	_, enPage := get(t, en, srv.URL+"/rules")
	enCSRF := match(csrfField, enPage)
	_, etag, _ := st.Section()

	cases := []struct {
		note, path string
		form       url.Values // nil: a GET
		want       string
	}{
		{note: "rule form: bad pattern", path: "/rules",
			form: url.Values{"etag": {etag}, "tools": {"bash"}, "pattern": {"re:("}}, want: "未保存：模式无法编译："},
		{note: "rule form: no tool", path: "/rules",
			form: url.Values{"etag": {etag}, "tools": {""}, "pattern": {"x"}}, want: "未保存：请至少填写一个工具。"},
		{note: "pattern check: empty", path: "/rules/check",
			form: url.Values{"tools": {"bash"}, "pattern": {""}}, want: "请输入模式。"},
		{note: "pattern check: fine", path: "/rules/check",
			form: url.Values{"tools": {"bash"}, "pattern": {"git status *"}}, want: "模式有效。"},
		{note: "impact preview without a log", path: "/rules/preview",
			form: url.Values{"tools": {"bash"}, "pattern": {"git push *"}, "action": {"deny"}}, want: "决策日志已关闭"},
		{note: "rule test: no sample", path: "/rules/test",
			form: url.Values{"tools": {"bash"}, "pattern": {"git *"}, "samples": {""}}, want: "请至少给出一个示例调用。"},
		{note: "tool level refused by the store", path: "/tools",
			form: url.Values{"etag": {etag}, "tool": {"bash"}, "level": {"maybe"}}, want: "未保存："},
		{note: "token without a name", path: "/tokens",
			form: url.Values{"name": {""}, "role": {"agent"}}, want: "未保存：令牌需要一个名称"},
		{note: "playground without a tool", path: "/playground",
			form: url.Values{"tool": {""}}, want: "请填写工具名称。"},
		{note: "a page that is not there", path: "/nope", want: "/nope 处没有页面"},
	}
	for _, c := range cases {
		var body string
		if c.form == nil {
			_, body = get(t, zh, srv.URL+c.path)
		} else {
			c.form.Set("csrf_token", csrf)
			_, body = post(t, zh, srv.URL+c.path, c.form)
		}
		if body = html.UnescapeString(body); !strings.Contains(body, c.want) {
			t.Errorf("%s: the zh-CN page does not say %q:\n%.2000s", c.note, c.want, body)
		}
	}

	form := url.Values{"csrf_token": {enCSRF}, "etag": {etag}, "tools": {"bash"}, "pattern": {"re:("}}
	if _, body := post(t, en, srv.URL+"/rules", form); !strings.Contains(body, "Not saved: The pattern does not compile: ") {
		t.Errorf("the English rule form lost its words:\n%.2000s", body)
	}
}

// TestDecisionFiltersSpeakChinese: the decisions page's filter errors,
// time presets and chart words follow the page's language.
func TestDecisionFiltersSpeakChinese(t *testing.T) {
	cases := []struct {
		note, query, want string
	}{
		{note: "unknown agent", query: "agent=nobody", want: "agent 必须是"},
		{note: "unknown level", query: "level=maybe", want: "level 必须是 allow、ask 或 deny"},
		{note: "unknown range", query: "range=2h", want: "range 必须是 15m、1h、24h 或 7d"},
		{note: "a time it cannot read", query: "since=yesterday", want: "since 必须是日期和时间"},
		{note: "a broken page link", query: "cursor=-1", want: "页面链接已失效"},
	}
	now := time.Date(2026, 1, 2, 15, 4, 0, 0, time.UTC)
	for _, c := range cases {
		v, _ := url.ParseQuery(c.query)
		_, err := decisionQuery(v, now, chinese)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want it to say %q", c.note, err, c.want)
		}
		if _, err := decisionQuery(v, now, english); err == nil || strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: the English error is %v", c.note, err)
		}
	}

	ctx := templates.WithLang(context.Background(), templates.LangZH)
	series := []decisionlog.LevelBucket{{Start: now, Counts: map[string]int64{"deny": 2}}}
	var buf bytes.Buffer
	p := templates.DecisionsProps{Error: "x", Chart: layoutChart(series, chinese)}
	if err := templates.Decisions(p).Render(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"15 分钟", "1 小时", "24 小时", "7 天", "1月2日 15:04 起：deny 2 次"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the zh-CN decisions page lacks %q", want)
		}
	}
}
