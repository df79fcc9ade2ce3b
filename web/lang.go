package web

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/templates"
)

// langCookie remembers the language a person chose.
const langCookie = "toolgate_lang"

// withLang puts the page language in the request context: the chosen one
// (cookie), else the best of Accept-Language, else English.
func withLang(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(templates.WithLang(r.Context(), requestLang(r))))
	})
}

// requestLang picks the language of a request.
func requestLang(r *http.Request) templates.Lang {
	if c, err := r.Cookie(langCookie); err == nil {
		if l, ok := templates.ParseLang(c.Value); ok {
			return l
		}
	}
	return acceptLang(r.Header.Get("Accept-Language"))
}

// acceptLang is the spoken language an Accept-Language header prefers
// most (by q weight, then order), English when it names none.
func acceptLang(h string) templates.Lang {
	type pref struct {
		lang templates.Lang
		q    float64
	}
	var prefs []pref
	for _, part := range strings.Split(h, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if l, ok := templates.ParseLang(tag); ok && q > 0 {
			prefs = append(prefs, pref{l, q})
		}
	}
	sort.SliceStable(prefs, func(i, j int) bool { return prefs[i].q > prefs[j].q })
	if len(prefs) == 0 {
		return templates.LangEN
	}
	return prefs[0].lang
}

// setLang is GET /lang?to=zh-CN&back=/path: it remembers the choice for a
// year and goes back to the page (a local path only).
func setLang(w http.ResponseWriter, r *http.Request) {
	l, ok := templates.ParseLang(r.URL.Query().Get("to"))
	if !ok {
		http.Error(w, "unknown language", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: langCookie, Value: string(l), Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
	back := r.URL.Query().Get("back")
	if !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") || strings.HasPrefix(back, "/\\") {
		back = "/"
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
