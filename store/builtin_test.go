package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPackageRulesThatDoNotParseAreRefused: a package default rule text
// that does not parse stops Open and ReadPolicy with an error instead of
// leaving a policy without its built-in deny rules; the real default
// parses and is in force when the config dir has no builtin_rules.yaml.
func TestPackageRulesThatDoNotParseAreRefused(t *testing.T) {
	bad := []byte("rules: [\n")
	opts := testOptions()
	opts.PackageRules = bad
	if s, err := Open(t.TempDir(), opts); err == nil {
		s.Close()
		t.Error("Open with a package default that does not parse: no error")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigFile), []byte("permissions: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := ReadPolicy(dir, bad); err == nil {
		t.Error("ReadPolicy with a package default that does not parse: no error")
	}
	s, err := Open(t.TempDir(), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if rules, src := s.BuiltinRules(); src != BuiltinSourcePackage || len(rules) == 0 {
		t.Errorf("the package default: %d rules from %q, want them in force", len(rules), src)
	}
}
