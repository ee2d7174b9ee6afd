package rewrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/exportdata"
)

// Options says what Build rewrites.
type Options struct {
	// Dir is the directory the go command runs in: the user's module.
	// Empty means the current directory.
	Dir string
	// Patterns are the packages under test, as go list takes them.
	Patterns []string
	// Tags are build tags, as -tags takes them; optional.
	Tags string
	// OutDir is where the rewritten files and overlay.json are written.
	// Empty means a new temporary directory, which the caller removes.
	OutDir string
}

// Result is what Build wrote.
type Result struct {
	// Overlay is the path of overlay.json, for the go command's -overlay.
	Overlay string
	// Packages are the import paths of the rewritten packages, sorted.
	Packages []string
	// Files is the number of source files the overlay replaces (not
	// counting the file added to each package); Sources the number of
	// Go files of the rewritten packages, changed or not.
	Files, Sources int
	// Notes are the constructs the explorer cannot control, and what else
	// the rewrite has to say, package by package and file by file.
	Notes []Note
}

// AddedFile is the name of the file the overlay adds to each rewritten
// package: an init function that calls rt.Rewritten with the package's
// import path.
const AddedFile = "zz_tollgate_explore.go"

// Build rewrites the packages under test and every package they and
// their tests import, except those of the standard library, of tollgate
// itself (the explorer and its twins) and of golang.org/x/sys (it has
// assembly; its use is noted), and packages reached only through
// tollgate's. It writes the rewritten files and overlay.json to
// opt.OutDir. Only a package's Go files are rewritten: its test files
// are not (see the package documentation), and its cgo and assembly
// files are reported as notes.
//
// The go command refuses an overlay of a file in the module cache. A
// module there with packages to rewrite is replaced, in an overlay of
// the go.mod (or go.work) file, by a symbolic link to its directory made
// in opt.OutDir/mod, and the overlay replaces the files under the link.
// Stack traces then name the files under the link, which hold the
// original text; notes name the files in the module cache.
func Build(opt Options) (*Result, error) {
	pkgs, err := goList(opt)
	if err != nil {
		return nil, err
	}
	todo, notes := plan(pkgs)
	exports := map[string]string{}
	for _, p := range pkgs {
		exports[p.ImportPath] = p.Export
	}
	env, err := readEnv(opt.Dir)
	if err != nil {
		return nil, err
	}

	out := opt.OutDir
	if out == "" {
		if out, err = os.MkdirTemp("", "tollgate-explore-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(out, 0o777); err != nil {
		return nil, err
	}
	res, err := write(todo, notes, out, env, exports)
	if err != nil && opt.OutDir == "" {
		os.RemoveAll(out)
	}
	return res, err
}

// write rewrites the packages todo into out.
func write(todo []*listPackage, notes []Note, out string, env goEnv, exports map[string]string) (*Result, error) {
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	res := &Result{Notes: notes}
	replace := map[string]string{}
	links := map[string]link{}
	for _, p := range todo {
		path := basePath(p.ImportPath)
		res.Packages = append(res.Packages, path)
		dst := filepath.Join(out, filepath.FromSlash(path))
		if err := os.MkdirAll(dst, 0o777); err != nil {
			return nil, err
		}
		// dir is where the overlay puts the package's files: its own
		// directory, or for a package in the module cache, where its
		// module's link is.
		dir := p.Dir
		if env.GOMODCACHE != "" && within(p.Dir, env.GOMODCACHE) {
			l, err := linkOf(p, env.GOMODCACHE, out)
			if err != nil {
				return nil, err
			}
			links[l.at] = l
			rel, err := filepath.Rel(l.dir, p.Dir)
			if err != nil {
				return nil, err
			}
			dir = filepath.Join(l.at, rel)
		}
		var srcs []Source
		for _, name := range p.GoFiles {
			orig := filepath.Join(p.Dir, name)
			src, err := os.ReadFile(orig)
			if err != nil {
				return nil, err
			}
			srcs = append(srcs, Source{orig, src})
		}
		res.Sources += len(srcs)
		goVersion := ""
		if p.Module != nil {
			goVersion = p.Module.GoVersion
		}
		outs, pkgNotes, err := Package(path, goVersion, srcs, exportdata.Importer(token.NewFileSet(), exports, p.ImportMap))
		if err != nil {
			return nil, err
		}
		res.Notes = append(res.Notes, pkgNotes...)
		for i, name := range p.GoFiles {
			if !outs[i].Changed {
				continue
			}
			to := filepath.Join(dst, name)
			if err := os.WriteFile(to, outs[i].Text, 0o666); err != nil {
				return nil, err
			}
			replace[filepath.Join(dir, name)] = to
			res.Files++
		}
		for _, name := range p.CgoFiles {
			res.Notes = append(res.Notes, Note{Pos: filepath.Join(p.Dir, name), What: "cgo", Unsupported: true})
		}
		for _, name := range p.SFiles {
			res.Notes = append(res.Notes, Note{Pos: filepath.Join(p.Dir, name), What: "assembly: its atomics are not explored", Unsupported: true})
		}
		to := filepath.Join(dst, AddedFile)
		if err := os.WriteFile(to, addedFile(p.Name, path), 0o666); err != nil {
			return nil, err
		}
		replace[filepath.Join(dir, AddedFile)] = to
	}
	if len(links) > 0 {
		if err := replaceModules(links, env, out, replace); err != nil {
			return nil, err
		}
	}
	b, err := json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "\t")
	if err != nil {
		return nil, err
	}
	res.Overlay = filepath.Join(out, "overlay.json")
	if err := os.WriteFile(res.Overlay, append(b, '\n'), 0o666); err != nil {
		return nil, err
	}
	return res, nil
}

// A link stands for a module of the module cache (see Build).
type link struct {
	at            string // the link, under out/mod
	path, version string // the module, as required
	dir, gomod    string // its directory and go.mod file
}

// linkOf returns the link for the module of p, which is in the module
// cache.
func linkOf(p *listPackage, cache, out string) (link, error) {
	m := p.Module
	if m == nil {
		return link{}, fmt.Errorf("%s: in the module cache without a module", p.ImportPath)
	}
	l := link{path: m.Path, version: m.Version, dir: m.Dir, gomod: m.GoMod}
	if r := m.Replace; r != nil && r.Dir != "" {
		l.dir, l.gomod = r.Dir, r.GoMod
	}
	rel, err := filepath.Rel(cache, l.dir)
	if err != nil || !within(l.dir, cache) {
		return link{}, fmt.Errorf("%s: module directory %s is not in the module cache", p.ImportPath, l.dir)
	}
	l.at = filepath.Join(out, "mod", rel)
	return l, nil
}

// replaceModules makes the links, and a copy of the go.mod (or go.work)
// file that replaces each module by its link, and adds the copy and the
// links' go.mod files to the overlay.
func replaceModules(links map[string]link, env goEnv, out string, replace map[string]string) error {
	file, verb := env.GOMOD, "mod"
	if env.GOWORK != "" && env.GOWORK != "off" {
		file, verb = env.GOWORK, "work"
	}
	if file == "" || file == os.DevNull {
		return fmt.Errorf("packages in the module cache are to be rewritten, but there is no go.mod file to replace their modules in")
	}
	// Replacements of the same module versions go, and the links'
	// replacements are added as text: go mod edit -replace would take
	// an @ or = in a link's path for its syntax.
	args := []string{verb, "edit"}
	var lines bytes.Buffer
	var ats []string
	for at := range links {
		ats = append(ats, at)
	}
	sort.Strings(ats)
	for _, at := range ats {
		l := links[at]
		if err := os.MkdirAll(filepath.Dir(at), 0o777); err != nil {
			return err
		}
		if err := os.Remove(at); err != nil && !os.IsNotExist(err) {
			return err
		}
		if err := os.Symlink(l.dir, at); err != nil {
			return err
		}
		// A module without a go.mod file of its own gets the one the
		// go command made for it.
		replace[filepath.Join(at, "go.mod")] = l.gomod
		args = append(args, "-dropreplace="+l.path+"@"+l.version)
		fmt.Fprintf(&lines, "replace %s %s => %s\n", l.path, l.version, strconv.Quote(at))
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	edited := filepath.Join(out, "overlay."+filepath.Base(file))
	if err := os.WriteFile(edited, data, 0o666); err != nil {
		return err
	}
	cmd := exec.Command("go", append(args, edited)...)
	cmd.Dir = out
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s edit: %v\n%s", verb, err, bytes.TrimSpace(b))
	}
	if data, err = os.ReadFile(edited); err != nil {
		return err
	}
	data = append(bytes.TrimRight(data, "\n"), "\n\n"...)
	if err := os.WriteFile(edited, append(data, lines.Bytes()...), 0o666); err != nil {
		return err
	}
	replace[file] = edited
	return nil
}

// within reports whether path is dir or in it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// goEnv is what Build reads of go env.
type goEnv struct{ GOMOD, GOWORK, GOMODCACHE string }

func readEnv(dir string) (goEnv, error) {
	cmd := exec.Command("go", "env", "-json", "GOMOD", "GOWORK", "GOMODCACHE")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return goEnv{}, fmt.Errorf("go env: %v\n%s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var e goEnv
	if err := json.Unmarshal(b, &e); err != nil {
		return goEnv{}, fmt.Errorf("go env output: %v", err)
	}
	return e, nil
}

// addedFile is the source of the file added to package name, import
// path path.
func addedFile(name, path string) []byte {
	return fmt.Appendf(nil, "// Code generated by tollgate explore. DO NOT EDIT.\n\npackage %s\n\nimport %s %q\n\nfunc init() { %s.Rewritten(%s) }\n",
		name, rtName, rtTwin, rtName, strconv.Quote(path))
}

// listPackage is what Build reads of go list's output.
type listPackage struct {
	ImportPath string
	Name       string
	Dir        string
	Standard   bool
	DepOnly    bool
	ForTest    string
	Module     *listModule
	GoFiles    []string
	CgoFiles   []string
	SFiles     []string
	Imports    []string
	ImportMap  map[string]string
	Export     string // the package's export data (go list -export)
}

// listModule is what Build reads of a package's module.
type listModule struct {
	Path, Version string
	GoVersion     string // its go line's version
	Dir           string // where its files are
	GoMod         string // its go.mod file
	Replace       *listModule
}

// goList runs go list -deps -test on the patterns. With -test the list
// has the packages the tests import too, and variants of packages
// compiled for a test ("p [p.test]").
func goList(opt Options) ([]listPackage, error) {
	args := []string{"list", "-deps", "-test", "-export", "-json=ImportPath,Name,Dir,Standard,DepOnly,ForTest,Module,GoFiles,CgoFiles,SFiles,Imports,ImportMap,Export"}
	if opt.Tags != "" {
		args = append(args, "-tags", opt.Tags)
	}
	args = append(args, "--")
	args = append(args, opt.Patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = opt.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %v\n%s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var pkgs []listPackage
	dec := json.NewDecoder(bytes.NewReader(stdout))
	for dec.More() {
		var p listPackage
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// basePath strips the variant from an import path: "p [p.test]" is p.
func basePath(importPath string) string {
	path, _, _ := strings.Cut(importPath, " [")
	return path
}

// own reports whether p is one of tollgate's packages.
func (p *listPackage) own() bool {
	if p.Module != nil {
		return p.Module.Path == selfModule
	}
	path := basePath(p.ImportPath)
	return path == selfModule || strings.HasPrefix(path, selfModule+"/")
}

// xsys reports whether p is a package of golang.org/x/sys.
func (p *listPackage) xsys() bool {
	return p.Module != nil && p.Module.Path == "golang.org/x/sys"
}

// testMain reports whether p is the main package go test generates.
func (p *listPackage) testMain() bool {
	return p.Name == "main" && p.ForTest == "" && strings.HasSuffix(p.ImportPath, ".test")
}

// plan picks the packages to rewrite from go list -deps -test's output:
// those reached from the packages named (and their tests) through imports
// that neither are standard nor belong to tollgate. Tollgate's own
// packages are not followed: a package the explorer alone imports (such
// as porcupine) is the explorer's, not the code under test's. A package
// of golang.org/x/sys is not rewritten but noted. Each package comes
// once, sorted by import path without variant; for the package under
// test it is the plain one, whose files are not test files.
func plan(pkgs []listPackage) ([]*listPackage, []Note) {
	byPath := map[string]*listPackage{}
	for i := range pkgs {
		byPath[pkgs[i].ImportPath] = &pkgs[i]
	}
	reached, ownCalled := reach(pkgs, byPath, explorerPackages(pkgs, byPath))
	chosen := map[string]*listPackage{}
	var notes []Note
	for base, dir := range ownCalled {
		notes = append(notes, Note{Pos: dir, What: base + " is tollgate's own and is not rewritten (the explorer links it): its goroutines, channels, timers and shared memory run uncontrolled, and a verdict says nothing of them"})
	}
	for i := range pkgs {
		p := &pkgs[i]
		base := basePath(p.ImportPath)
		switch {
		case !reached[p.ImportPath] || chosen[base] != nil || p.testMain():
			continue
		case p.ForTest != "" && strings.TrimSuffix(base, "_test") == p.ForTest:
			// The package under test compiled with its test files
			// (the plain one is listed too), or its external test.
			continue
		case p.xsys():
			notes = append(notes, Note{Pos: p.Dir, What: base + " is not rewritten (it has assembly): its atomics are not explored"})
		}
		// A package compiled again for a test ("q [p.test]") has the
		// files of the plain one.
		chosen[base] = p
	}
	sort.Slice(notes, func(i, j int) bool { return notes[i].Pos < notes[j].Pos })
	var todo []*listPackage
	for _, p := range chosen {
		if !p.xsys() {
			todo = append(todo, p)
		}
	}
	sort.Slice(todo, func(i, j int) bool { return basePath(todo[i].ImportPath) < basePath(todo[j].ImportPath) })
	return todo, notes
}

// explorerPackages are the packages (by path without variant) that
// tollgate's packages import (porcupine, the twins' dependencies): the
// explorer's, never the code under test, even where a test imports them
// too (to write its model); rewriting them would put the oracle under the
// schedule.
func explorerPackages(pkgs []listPackage, byPath map[string]*listPackage) map[string]bool {
	explorer := map[string]bool{}
	var mark func(path string)
	mark = func(path string) {
		p := byPath[path]
		if p == nil || explorer[basePath(path)] || p.Standard {
			return
		}
		explorer[basePath(path)] = true
		for _, imp := range p.Imports {
			mark(imp)
		}
	}
	for i := range pkgs {
		if pkgs[i].own() {
			mark(pkgs[i].ImportPath)
		}
	}
	return explorer
}

// reach follows the imports of the packages named (not only depended on)
// through packages that are neither standard, nor tollgate's, nor the
// explorer's, and returns those reached. ownCalled is tollgate's own
// packages that the code under test calls, other than the explorer's API
// (explore/...), with their directories: they are linked by the explorer
// and never rewritten, so what they do runs uncontrolled, and a user must
// be told (exploring impl/credits' Owner this way ran its goroutine,
// ticker and select free, and the run said "exhaustive").
func reach(pkgs []listPackage, byPath map[string]*listPackage, explorer map[string]bool) (reached map[string]bool, ownCalled map[string]string) {
	reached, ownCalled = map[string]bool{}, map[string]string{}
	var visit func(path string)
	visit = func(path string) {
		p := byPath[path]
		if p != nil && p.own() && !p.Standard {
			if base := basePath(path); base != selfModule+"/explore" && !strings.HasPrefix(base, selfModule+"/explore/") {
				ownCalled[base] = p.Dir
			}
		}
		if p == nil || reached[path] || p.Standard || p.own() || explorer[basePath(path)] {
			return
		}
		reached[path] = true
		for _, imp := range p.Imports {
			visit(imp)
		}
	}
	for i := range pkgs {
		if !pkgs[i].DepOnly {
			visit(pkgs[i].ImportPath)
		}
	}
	return reached, ownCalled
}

// Test runs go test in dir on pattern, built through res's overlay:
// flags go to go test (-run, -v, …), args to the test binary (after
// -args), env is added to the environment. It returns go test's error
// (an *exec.ExitError when tests failed).
func Test(res *Result, dir, pattern string, flags, args, env []string, stdout, stderr io.Writer) error {
	cmdArgs := append([]string{"test", "-overlay", res.Overlay, "-count=1"}, flags...)
	cmdArgs = append(cmdArgs, pattern)
	if len(args) > 0 {
		cmdArgs = append(append(cmdArgs, "-args"), args...)
	}
	cmd := exec.Command("go", cmdArgs...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stdout, stderr
	cmd.Env = append(os.Environ(), env...)
	return cmd.Run()
}
