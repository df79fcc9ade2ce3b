package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// Gemini CLI (0.61) runs no hook at all, the user's included, in a folder
// it does not trust, and says so only in its debug log. Folder trust is on
// unless settings say security.folderTrust.enabled: false; a folder is
// trusted by $GEMINI_CLI_TRUST_WORKSPACE=true or by the longest matching
// entry of ~/.gemini/trustedFolders.json (TRUST_FOLDER, TRUST_PARENT: the
// entry's parent, DO_NOT_TRUST). https://geminicli.com/docs/cli/trusted-folders/

// checkGeminiTrust checks that Gemini CLI runs hooks in dir.
func checkGeminiTrust(r *doctorReport, settings *jsonObject, dir string, getenv func(string) string) {
	switch {
	case getenv("GEMINI_RESTRICTED_MODE") == "true" || getenv("GEMINI_CLI_TRUST_WORKSPACE") == "false":
		r.fail("gemini: this environment makes every folder untrusted, and Gemini CLI runs no hook in an untrusted folder")
		return
	case getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" || !geminiFolderTrustOn(settings):
		r.ok("gemini: Gemini CLI runs hooks in %s (folder trust is off or the workspace is trusted by the environment)", dir)
		return
	}
	if geminiTrusts(filepath.Join(getenv("HOME"), ".gemini", "trustedFolders.json"), dir) {
		r.ok("gemini: Gemini CLI trusts %s, so it runs the hooks there", dir)
		return
	}
	r.fail("gemini: Gemini CLI does not trust %s and runs no hook there (not even toolgate's): trust it in Gemini CLI (/permissions) before running the agent there", dir)
}

// geminiFolderTrustOn reads security.folderTrust.enabled (default true).
func geminiFolderTrustOn(settings *jsonObject) bool {
	var s struct {
		Security struct {
			FolderTrust struct {
				Enabled *bool `json:"enabled"`
			} `json:"folderTrust"`
		} `json:"security"`
	}
	raw, err := settings.MarshalJSON()
	if err != nil || json.Unmarshal(raw, &s) != nil || s.Security.FolderTrust.Enabled == nil {
		return true
	}
	return *s.Security.FolderTrust.Enabled
}

// geminiTrusts applies trustedFolders.json's longest matching entry to dir.
func geminiTrusts(file, dir string) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	var rules map[string]string
	if json.Unmarshal(data, &rules) != nil {
		return false
	}
	dir = realPath(dir)
	best, level := -1, ""
	for path, l := range rules {
		effective := path
		if l == "TRUST_PARENT" {
			effective = filepath.Dir(path)
		}
		effective = realPath(effective)
		if (dir == effective || strings.HasPrefix(dir, effective+string(filepath.Separator))) && len(path) > best {
			best, level = len(path), l
		}
	}
	return level == "TRUST_FOLDER" || level == "TRUST_PARENT"
}

// realPath resolves links as Gemini CLI does, keeping the path when it
// cannot.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
