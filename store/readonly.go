package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/toolgate/toolgate/policy"
)

// ReadPolicy reads the policy of a config dir without opening it as a
// store: config.yaml's permissions section and builtin_rules.yaml's rules
// (the rules of the text packageDefault when the file is absent, as the
// server reads it: engine/builtin's default),
// writing nothing and taking no lock. It is what `toolgate test` checks in
// a CI job, where no server runs. A file that cannot be parsed is an error;
// a section that is not a mapping is a problem.
func ReadPolicy(dir string, packageDefault []byte) (perms map[string]any, builtinRules []any, problems []policy.Problem, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		raw = nil
	case err != nil:
		return nil, nil, nil, err
	}
	if raw != nil {
		perms, problems, err = decodeSection(raw)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", ConfigFile, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, BuiltinFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		builtinRules, err = decodePackageRules(packageDefault)
		if err != nil {
			return nil, nil, nil, err
		}
		return perms, builtinRules, problems, nil
	case err != nil:
		return nil, nil, nil, err
	}
	builtinRules, err = decodeRuleList(b)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", BuiltinFile, err)
	}
	return perms, builtinRules, problems, nil
}
