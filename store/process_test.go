package store

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/atomicfile"
	"gopkg.in/yaml.v3"
)

// helperEnv selects a helper mode when the test binary re-executes itself.
const helperEnv = "TOOLGATE_STORE_HELPER"

// TestHelperProcess is not a test: it is the body of the child processes
// that the concurrency, crash and write-error tests start.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process only")
	}
	dir := os.Getenv("TOOLGATE_STORE_DIR")
	var err error
	switch mode {
	case "writer":
		err = helperWriter(dir, os.Getenv("TOOLGATE_STORE_PREFIX"))
	case "storm":
		err = helperStorm(dir)
	case "efbig":
		err = helperFileTooLarge(dir)
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

func helperCommand(t *testing.T, mode, dir string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), append(env, helperEnv+"="+mode, "TOOLGATE_STORE_DIR="+dir)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// helperWriter does API edits through its own Store and raw edits of the
// file under the same lock, printing every acknowledged change.
func helperWriter(dir, prefix string) error {
	s, err := Open(dir, testOptions())
	if err != nil {
		return err
	}
	defer s.Close()
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("%s_rule_%d", prefix, i)
		if _, err := s.CreateRule(ruleOf(map[string]any{"id": id, "tools": []any{"bash"}, "pattern": id, "action": "allow"})); err != nil {
			return err
		}
		fmt.Println("rule", id)
		key := fmt.Sprintf("%s_raw_%d", prefix, i)
		if err := rawAppend(dir, key); err != nil {
			return err
		}
		fmt.Println("raw", key)
	}
	return nil
}

// rawAppend is a hand edit by a cooperating tool: under the lock it adds a
// top-level key at the end of config.yaml, writing the file in place.
func rawAppend(dir, key string) error {
	return lockDir(dir, func() error {
		path := filepath.Join(dir, ConfigFile)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(path, append(raw, []byte(key+": 1\n")...), 0o600)
	})
}

// helperStorm writes rules as fast as it can, printing each id once its
// write returned, until it is killed.
func helperStorm(dir string) error {
	s, err := Open(dir, testOptions())
	if err != nil {
		return err
	}
	prefix := strconv.Itoa(os.Getpid())
	for i := 0; ; i++ {
		id := fmt.Sprintf("storm_%s_%d", prefix, i)
		if _, err := s.CreateRule(ruleOf(map[string]any{"id": id, "tools": []any{"bash"}, "pattern": id, "action": "allow"})); err != nil {
			return err
		}
		fmt.Println(id)
	}
}

// helperFileTooLarge limits the size of files this process may write, so
// that the next write fails as on a full disk, even for root.
func helperFileTooLarge(dir string) error {
	s, err := Open(dir, testOptions())
	if err != nil {
		return err
	}
	defer s.Close()
	_, tag, _ := s.Section()
	signal.Ignore(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 64, Max: ^uint64(0)}); err != nil {
		return err
	}
	_, err = s.SetToolLevel("bash", "deny")
	if !errors.Is(err, syscall.EFBIG) {
		return fmt.Errorf("got %v, want an error wrapping EFBIG", err)
	}
	if _, got, _ := s.Section(); got != tag {
		return errors.New("the policy in memory changed after a failed write")
	}
	return nil
}

// TestWriteErrorOnFullDisk: a failing write wraps the OS error, leaves the
// file as it was and the policy in memory untouched.
func TestWriteErrorOnFullDisk(t *testing.T) {
	_, dir := openFixture(t, "config.yaml")
	before := readFile(t, filepath.Join(dir, ConfigFile))
	if out, err := helperCommand(t, "efbig", dir).Output(); err != nil {
		t.Fatalf("helper: %v %s", err, out)
	}
	if got := readFile(t, filepath.Join(dir, ConfigFile)); string(got) != string(before) {
		t.Errorf("a failed write changed the file")
	}
}

// ruleIDs returns the ids of permissions.rules and the top-level keys.
func fileContents(t *testing.T, dir string) (map[string]bool, map[string]bool) {
	t.Helper()
	raw := readFile(t, filepath.Join(dir, ConfigFile))
	var top map[string]any
	if err := yaml.Unmarshal(raw, &top); err != nil {
		t.Fatalf("config.yaml does not parse: %v\n%s", err, raw)
	}
	ids, keys := map[string]bool{}, map[string]bool{}
	for k := range top {
		keys[k] = true
	}
	perms, _ := normalize(top["permissions"]).(map[string]any)
	rules, _ := perms["rules"].([]any)
	for _, r := range rules {
		if m, ok := r.(map[string]any); ok {
			ids[fmt.Sprint(m["id"])] = true
		}
	}
	ext, _ := perms["external_directory"].(map[string]any)
	for k := range ext {
		ids["ext:"+k] = true
	}
	return ids, keys
}

// TestConcurrentWritersLoseNothing: goroutines and another process write at
// once, through the API and by raw edits under the same lock; every
// acknowledged change is in the file afterwards.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	s, dir := openFixture(t, "config.yaml")
	var mu sync.Mutex
	var rules, exts, raws []string
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				id := fmt.Sprintf("g%d_rule_%d", g, i)
				if _, err := s.CreateRule(ruleOf(map[string]any{"id": id, "tools": []any{"bash"}, "pattern": id, "action": "allow"})); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				rules = append(rules, id)
				mu.Unlock()
			}
		}(g)
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 8; i++ {
			key := fmt.Sprintf("/ext/%d", i)
			if _, err := s.SetExternalDirectory(key, "allow"); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			exts = append(exts, key)
			mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		for i := 0; i < 8; i++ {
			key := fmt.Sprintf("parent_raw_%d", i)
			if err := rawAppend(dir, key); err != nil {
				errs <- err
				return
			}
			mu.Lock()
			raws = append(raws, key)
			mu.Unlock()
		}
	}()
	child := helperCommand(t, "writer", dir, "TOOLGATE_STORE_PREFIX=child")
	out, childErr := child.Output()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("writer: %v", err)
	}
	if childErr != nil {
		t.Fatalf("child: %v", childErr)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		kind, name, _ := strings.Cut(line, " ")
		if kind == "rule" {
			rules = append(rules, name)
		} else if kind == "raw" {
			raws = append(raws, name)
		}
	}
	ids, keys := fileContents(t, dir)
	if len(rules) != 4*8+10 || len(raws) != 8+10 || len(exts) != 8 {
		t.Fatalf("acknowledged %d rules, %d raw keys, %d external keys; want 42, 18, 8", len(rules), len(raws), len(exts))
	}
	for _, id := range rules {
		if !ids[id] {
			t.Errorf("acknowledged rule %s is missing", id)
		}
	}
	for _, k := range exts {
		if !ids["ext:"+k] {
			t.Errorf("acknowledged external key %s is missing", k)
		}
	}
	for _, k := range raws {
		if !keys[k] {
			t.Errorf("acknowledged raw edit %s is missing", k)
		}
	}
	raw := string(readFile(t, filepath.Join(dir, ConfigFile)))
	for _, c := range []string{"# logging, after the policy", "# the provider", "# my rules", "# trailing comment at the end of the file"} {
		if n := strings.Count(raw, c); n != 1 {
			t.Errorf("comment %q appears %d times, want once", c, n)
		}
	}
}

// TestCrashDuringWriteStorm kills a writing child with SIGKILL, many times:
// the file always parses and holds every write acknowledged before the kill.
func TestCrashDuringWriteStorm(t *testing.T) {
	_, dir := openFixture(t, "config.yaml")
	var acked []string
	for round := 0; round < 10; round++ {
		cmd := helperCommand(t, "storm", dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		// Kill a varying time after the first acknowledged write.
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("round %d: child ended before writing", round)
			}
			acked = append(acked, l)
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: child wrote nothing", round)
		}
		time.Sleep(time.Duration(10+round*7) * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for l := range lines {
			acked = append(acked, l)
		}
		cmd.Wait()
		ids, _ := fileContents(t, dir)
		for _, id := range acked {
			if !ids[id] {
				t.Fatalf("round %d: acknowledged %s is missing", round, id)
			}
		}
	}
	t.Logf("%d acknowledged writes survived 10 kills", len(acked))
	s, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ps := s.Problems(); len(ps) != 0 {
		t.Errorf("problems after the storm: %v", ps)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, atomicfile.TempPrefix+"*.tmp"))
	if len(matches) != 0 {
		t.Errorf("Open left stale temp files: %v", matches)
	}
}
