package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolgate/toolgate/grant"
)

// runGrants is `toolgate grants [--agent A] [--session S] [--tool T]
// [--json]`, which lists the live grants, and `toolgate grants revoke ID`,
// which takes one back on every replica.
func runGrants(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 && args[0] == "revoke" {
		return runGrantsRevoke(args[1:], stdout, stderr, getenv)
	}
	var c conn
	var agent, session, tool string
	var asJSON bool
	fs := flag.NewFlagSet("toolgate grants", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addConnFlags(fs, &c, getenv)
	fs.StringVar(&agent, "agent", "", "only grants made for this agent (rest, claude-code, codex, gemini, ...)")
	fs.StringVar(&session, "session", "", "only grants of this session")
	fs.StringVar(&tool, "tool", "", "only grants of this tool")
	fs.BoolVar(&asJSON, "json", false, "print the server's answer as JSON")
	if err := fs.Parse(args); err != nil {
		return exitError
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "toolgate grants: unexpected argument %q\n%s", fs.Arg(0), usage)
		return exitError
	}
	token, err := c.resolve()
	if err != nil {
		return failed(stderr, "toolgate grants", err)
	}
	q := url.Values{}
	for k, v := range map[string]string{"agent": agent, "session_id": session, "tool_name": tool} {
		if v != "" {
			q.Set(k, v)
		}
	}
	path := "/api/v1/grants"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	data, _, err := exchange(context.Background(), c, token, http.MethodGet, path, nil, "", requestTimeout)
	if err != nil {
		return failed(stderr, "toolgate grants", err)
	}
	if asJSON {
		stdout.Write(data)
		return exitOK
	}
	var page struct {
		Grants []grant.Grant `json:"grants"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		return failed(stderr, "toolgate grants: reading the answer", err)
	}
	printGrants(stdout, page.Grants, time.Now())
	return exitOK
}

// printGrants writes one line a grant: id, tool, what it covers, scope,
// session, who granted it and how long it has left.
func printGrants(w io.Writer, grants []grant.Grant, now time.Time) {
	if len(grants) == 0 {
		fmt.Fprintln(w, "no live grants")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTOOL\tCOVERS\tSCOPE\tSESSION\tGRANTED BY\tEXPIRES IN")
	for _, g := range grants {
		covers := g.Pattern
		if covers == "" {
			covers = "this exact call (" + shortDigest(g.ArgsDigest) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.ToolName, oneLine(covers), g.Scope,
			dash(g.SessionID), dash(g.GrantedBy), g.ExpiresAt.Sub(now).Round(time.Second))
	}
	tw.Flush()
}

// runGrantsRevoke is `toolgate grants revoke ID`.
func runGrantsRevoke(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	c, rest, code := parseConn("grants revoke", args, stderr, getenv)
	if code != exitOK {
		return code
	}
	if len(rest) != 1 || strings.TrimSpace(rest[0]) == "" {
		fmt.Fprintf(stderr, "toolgate grants revoke: give one grant id\n%s", usage)
		return exitError
	}
	token, err := c.resolve()
	if err != nil {
		return failed(stderr, "toolgate grants revoke", err)
	}
	id := rest[0]
	if _, _, err := exchange(context.Background(), c, token, http.MethodDelete, "/api/v1/grants/"+url.PathEscape(id), nil, "", requestTimeout); err != nil {
		return failed(stderr, "toolgate grants revoke", err)
	}
	fmt.Fprintf(stdout, "revoked %s\n", id)
	return exitOK
}

func shortDigest(d string) string {
	if len(d) > 12 {
		return "sha256 " + d[:12]
	}
	return "sha256 " + d
}

// oneLine keeps a pattern on one line of the table, cut at 60 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
