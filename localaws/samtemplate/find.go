package samtemplate

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// Find returns the path of the template.yaml that sits next to the go.mod of module (a module path, e.g.
// github.com/transferflow/orchestrator): for each directory of starts in turn, it tries that directory and then
// each of its parents. An empty module accepts any go.mod, and empty starts are passed over. When none matches,
// the error names every directory the search started from, so that a user sees where it looked.
func Find(module string, starts ...string) (string, error) {
	var looked []string
	for _, start := range starts {
		if start == "" {
			continue
		}
		looked = append(looked, start)
		for dir := filepath.Clean(start); ; {
			if isModuleRoot(dir, module) {
				return filepath.Join(dir, "template.yaml"), nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	what := "template.yaml next to a go.mod"
	if module != "" {
		what = "template.yaml next to the go.mod of " + module
	}
	if len(looked) == 0 {
		return "", fmt.Errorf("no %s: nowhere to look", what)
	}
	return "", fmt.Errorf("no %s in %s or their parents", what, strings.Join(looked, ", "))
}

// isModuleRoot reports whether dir holds template.yaml and a go.mod that declares module (any module when empty).
func isModuleRoot(dir, module string) bool {
	if _, err := os.Stat(filepath.Join(dir, "template.yaml")); err != nil {
		return false
	}
	got, err := modulePath(filepath.Join(dir, "go.mod"))
	return err == nil && (module == "" || got == module)
}

// modulePath reads the module directive of a go.mod file.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
			continue
		}
		rest, _, _ = strings.Cut(rest, "//")
		p := strings.TrimSpace(rest)
		if unq, err := strconv.Unquote(p); err == nil {
			p = unq
		}
		return p, nil
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", errors.New(gomod + ": no module directive")
}

// Locate finds the template.yaml of the module this program was built from, for a tool given no --template: from
// the current directory up, else from the directory of the running executable up (bin/local finds the repository
// root above bin/), else from the source directory the program was compiled in (absent when built with
// -trimpath). The error names where it looked.
func Locate() (string, error) {
	module := ""
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path != "" && bi.Main.Path != "command-line-arguments" {
		module = bi.Main.Path
	}
	wd, _ := os.Getwd()
	exeDir := ""
	if exe, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		exeDir = filepath.Dir(exe)
	}
	return Find(module, wd, exeDir, sourceDir())
}

// sourceDir is the directory this file was compiled from, or "" when the build recorded no absolute path
// (-trimpath).
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return filepath.Dir(file)
}
