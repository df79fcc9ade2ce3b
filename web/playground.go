package web

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/templates"
)

// playgroundPage shows the playground, prefilled from the query (the
// decisions page links a logged call here); for an admin a prefilled call
// is decided at once, since deciding changes nothing.
func (u *UI) playgroundPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("tool") == "" {
		render(w, r, http.StatusOK, templates.Playground(templates.PlaygroundProps{
			Nav: u.nav(r, "/playground"), Tools: toolOptions(u.mcpToolsSeen(r), translatorFor(r.Context())), Form: templates.PlayForm{Tool: "bash", Channel: "web"},
		}))
		return
	}
	u.decidePlay(w, r, q.Get)
}

// playground decides the posted call with the policy in force, explained.
// It changes nothing.
func (u *UI) playground(w http.ResponseWriter, r *http.Request) {
	u.decidePlay(w, r, r.PostFormValue)
}

// decidePlay renders the playground with its form read through get, and
// the decision when the person may run it.
func (u *UI) decidePlay(w http.ResponseWriter, r *http.Request, get func(string) string) {
	f := func(k string) string { return strings.TrimSpace(get(k)) }
	form := templates.PlayForm{Tool: f("tool"), Args: f("args"), Command: get("command"),
		Path: f("path"), Channel: f("channel"), Workspace: f("workspace")}
	p := templates.PlaygroundProps{Nav: u.nav(r, "/playground"), Tools: toolOptions(u.mcpToolsSeen(r), translatorFor(r.Context())), Form: form}
	if !p.Nav.CanEdit {
		render(w, r, http.StatusOK, templates.Playground(p))
		return
	}
	req, msg := playRequest(form, translatorFor(r.Context()))
	if msg != "" {
		p.Error = msg
		render(w, r, http.StatusUnprocessableEntity, templates.Playground(p))
		return
	}
	d := u.deps.Policy.Engine().Evaluate(req)
	p.Result = &templates.PlayResult{Level: d.Level.String(), MatchedRule: d.MatchedRule, Reason: d.Reason,
		ExternalPaths: d.ExternalPaths, Steps: stepRows(d.Trace)}
	render(w, r, http.StatusOK, templates.Playground(p))
}

// playRequest builds the engine request of the form: the JSON arguments,
// with the command and path fields added when given.
func playRequest(f templates.PlayForm, t translator) (*engine.Request, string) {
	if f.Tool == "" {
		return nil, t("play.err.notool")
	}
	args := map[string]any{}
	if f.Args != "" {
		if err := json.Unmarshal([]byte(f.Args), &args); err != nil {
			return nil, t.f("play.err.args", err.Error())
		}
	}
	if c := strings.TrimSpace(f.Command); c != "" {
		args["command"] = f.Command
	}
	if f.Path != "" {
		args["path"] = f.Path
	}
	return &engine.Request{Call: engine.NewCall(f.Tool, args), ChannelID: f.Channel, Workspace: f.Workspace, Explain: true}, ""
}

// stepRows shows an engine trace as the playground and the decisions page
// both render it.
func stepRows(trace []engine.Step) []templates.StepRow {
	rows := make([]templates.StepRow, 0, len(trace))
	for _, s := range trace {
		rows = append(rows, templates.StepRow{Name: s.Name, Result: s.Result, Rule: s.Rule,
			Detail: s.Detail, Hits: strings.Join(s.Hits, ", "), Decisive: s.Decisive})
	}
	return rows
}
