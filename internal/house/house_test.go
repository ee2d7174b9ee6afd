package house

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/tollgate/tollgate"

type pkg struct {
	ImportPath string
	Name       string
	Imports    []string
}

// list returns every package of the module, with its non-test imports:
// one go list for the package's tests (each is half a second of CPU).
func list(t *testing.T) []pkg {
	t.Helper()
	pkgs, err := listed()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

var listed = sync.OnceValues(func() ([]pkg, error) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Name,Imports", module+"/...")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		p.ImportPath = strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		var ours []string
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				ours = append(ours, rel)
			}
		}
		p.Imports = ours
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
})

// twins are the switch-point twins that rewritten code calls in place of
// sync/atomic, sync, time, context and the go statement and channel
// operations (explore/rewrite), with the virtual clock they read: the
// runtime of explored code, as internal/seam/hooked is of the tables'
// copies. They import only that and the standard library. The explored
// copy of impl/credits's owner.go (internal/mutants/explored) is such
// code, so they are reference code and a room of their own, below the
// explorer that imports the explored copies.
var twins = []string{"explore/atomic", "explore/sync", "explore/rt", "explore/internal/vclock"}

// reference reports whether path is reference code: what port authors read
// and the checkers check, never a checker itself.
func reference(path string) bool {
	if slices.Contains(twins, path) {
		return true
	}
	for _, prefix := range []string{"model", "impl", "internal/seam", "internal/clock", "internal/layout", "internal/mutants/explored"} {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return generatedCopy(path)
}

// generatedCopy reports whether path is a mutant's package, a copy of
// impl/ with its patch applied.
func generatedCopy(path string) bool {
	rest, ok := strings.CutPrefix(path, "internal/mutants/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	for _, p := range []string{"cr-", "tb-", "rcr-", "rtb-", "ecr-", "etb-"} {
		if strings.HasPrefix(first, p) {
			return true
		}
	}
	return false
}

// room is the part of the house path lives in: its top-level directory, or
// its directory under internal/ or backends/; the twins, and the rewrite,
// are rooms of their own.
func room(path string) string {
	switch {
	case slices.Contains(twins, path):
		return "explore twins"
	case path == "explore/rewrite":
		// The rewrite imports the standard library alone: the generator
		// of the explored copies (internal/mutants) runs it as tollgate
		// explore does.
		return path
	}
	parts := strings.Split(path, "/")
	if (parts[0] == "internal" || parts[0] == "backends") && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

func TestReferenceImportsNoChecker(t *testing.T) {
	for _, p := range list(t) {
		if p.ImportPath == "model" && len(p.Imports) > 0 {
			t.Errorf("model/ imports %v: it must import nothing of ours", p.Imports)
		}
		if !reference(p.ImportPath) {
			continue
		}
		for _, imp := range p.Imports {
			if !reference(imp) {
				t.Errorf("%s is reference code and imports %s, a checker", p.ImportPath, imp)
			}
		}
	}
}

func TestNoArrowRunsBackUp(t *testing.T) {
	edges := map[string]map[string]bool{}
	for _, p := range list(t) {
		from := room(p.ImportPath)
		for _, imp := range p.Imports {
			if to := room(imp); to != from {
				if edges[from] == nil {
					edges[from] = map[string]bool{}
				}
				edges[from][to] = true
			}
		}
	}
	// A depth-first search; a grey room met again closes a cycle.
	const white, grey, black = 0, 1, 2
	color := map[string]int{}
	var stack []string
	var visit func(r string)
	visit = func(r string) {
		color[r] = grey
		stack = append(stack, r)
		next := make([]string, 0, len(edges[r]))
		for to := range edges[r] {
			next = append(next, to)
		}
		sort.Strings(next)
		for _, to := range next {
			switch color[to] {
			case grey:
				i := slices.Index(stack, to)
				t.Errorf("the rooms import each other in a circle: %s → %s", strings.Join(stack[i:], " → "), to)
			case white:
				visit(to)
			}
		}
		stack = stack[:len(stack)-1]
		color[r] = black
	}
	rooms := make([]string, 0, len(edges))
	for r := range edges {
		rooms = append(rooms, r)
	}
	sort.Strings(rooms)
	for _, r := range rooms {
		if color[r] == white {
			visit(r)
		}
	}
}

// sameTable is the package names that several backends give the same
// table on purpose: impl/credits, impl/redis/credits and impl/etcd/credits
// are one API, so a program switches backend by its import path alone.
var sameTable = map[string]bool{"credits": true, "tokenbucket": true}

func TestNoPackageNameTwice(t *testing.T) {
	byName := map[string][]string{}
	for _, p := range list(t) {
		if p.Name == "main" || sameTable[p.Name] || generatedCopy(p.ImportPath) {
			continue
		}
		byName[p.Name] = append(byName[p.Name], p.ImportPath)
	}
	for name, paths := range byName {
		if len(paths) > 1 {
			t.Errorf("package name %q is used by %v", name, paths)
		}
	}
}
