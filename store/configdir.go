package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EnvConfigDir names the config dir when no --config-dir flag is given.
const EnvConfigDir = "JIUWENSWARM_CONFIG_DIR"

// File names inside the config dir.
const (
	ConfigFile  = "config.yaml"
	BuiltinFile = "builtin_rules.yaml"
	lockFile    = ".config.yaml.lock"
)

// ResolveConfigDir picks the config dir of docs/configuration.md#permissions-keys: the flag value, else
// $JIUWENSWARM_CONFIG_DIR, else ~/.jiuwenswarm/config. A leading ~ is
// expanded and the result is absolute.
func ResolveConfigDir(flagValue string) (string, error) {
	dir := strings.TrimSpace(flagValue)
	if dir == "" {
		dir = strings.TrimSpace(os.Getenv(EnvConfigDir))
	}
	home, herr := os.UserHomeDir()
	if dir == "" {
		if herr != nil {
			return "", fmt.Errorf("config dir: no --config-dir, no $%s and no home directory: %w", EnvConfigDir, herr)
		}
		return filepath.Join(home, ".jiuwenswarm", "config"), nil
	}
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		if herr != nil {
			return "", fmt.Errorf("config dir %q: %w", dir, herr)
		}
		dir = filepath.Join(home, dir[1:])
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("config dir %q: %w", dir, err)
	}
	return abs, nil
}
