// Package generate builds the mutant packages of internal/mutants from
// their patches, in memory: internal/mutants/build hands them to the go
// command through an -overlay (Overlay), and internal/mutants/gen writes
// the files that stay committed (Committed: the explorer's copies of
// impl/, the constructors files without mutants), which the drift test of
// internal/mutants compares with the files on disk.
package generate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tollgate/tollgate/internal/mutants/patch"
)

// Paths, relative to the module root and slash-separated.
const (
	MutantsDir = "internal/mutants"
	PatchesDir = MutantsDir + "/patches"
	TablesFile = "internal/sut/tables_gen.go"
	// Command is how to regenerate, as error messages say it.
	Command = "go generate ./internal/mutants"
)

// reserved are the directories of internal/mutants that are not mutant
// packages. (explored holds generated packages too, but no mutant may take
// its name; auto is the automatic mutation campaign.)
var reserved = []string{"auto", "build", "explored", "gen", "internal", "patch", "patches", "testdata"}

// A primitive is one package of impl/ that mutants copy.
type primitive struct {
	name string // the Go package name, also the directory under impl/
	// tables are the files holding the table (its shared memory): they are
	// copied into every mutant of the primitive, and only they may be
	// patched.
	tables []string
	// values are the files holding the value types of the API: a mutant
	// aliases their exported types and constants instead of copying them,
	// so its tables satisfy the interfaces of internal/sut.
	values []string
	// viewed are value files (of values) whose type's memory the table
	// reads: the explored copy holds a view of it (holder.go).
	viewed []string
	// rewritten are files that are no table but run one from goroutines
	// of their own, over channels, timers and contexts: the explored copy
	// holds them rewritten as tollgate explore rewrites code (owner.go);
	// a mutant of the catalogue neither copies nor aliases them.
	rewritten []string
	// unused are the files a mutant needs neither copied nor aliased.
	unused []string
}

func (p primitive) dir() string { return "impl/" + p.name }

var primitives = map[bool]primitive{
	true: {
		name:      "credits",
		tables:    []string{"credits.go", "stats_off.go", "stats_on.go"},
		values:    []string{"types.go", "holder.go"},
		viewed:    []string{"holder.go"},
		rewritten: []string{"owner.go"},
		unused:    []string{"epoch.go"}, // epoch.go: the exported view of credits.go's epoch encoding
	},
	false: {
		name:   "tokenbucket",
		tables: []string{"hash.go", "stats_off.go", "stats_on.go", "tokenbucket.go", "trie.go", "wait.go"},
		values: []string{"types.go"},
		unused: []string{"bound.go", "reclaim.go"}, // views over Table's methods: no shared memory of their own
	},
}

// File is one generated file.
type File struct {
	Path string // relative to the module root, slash-separated
	Data []byte
}

// Root returns the module root: the nearest directory at or above the
// working directory that holds a go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("generate: no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// Mutant is one patch and the fault it declares.
type Mutant struct {
	Fault Fault
	// Patch is the patch file's path.
	Patch string
	// Ident is the fault's constant in internal/fault, e.g. "CrNoEpochPin".
	Ident string
}

// Name is the mutant's name: its fault's, its patch's base name and its
// package directory under internal/mutants.
func (m Mutant) Name() string { return m.Fault.String() }

// Dir is the mutant package's directory.
func (m Mutant) Dir() string { return MutantsDir + "/" + m.Name() }

// Mutants lists the patches under root in the order of their faults'
// values, read from each patch's header (patch.DeclareAll), and fails
// unless the values run from 1 with no gap and no two patches share a
// value or an identifier.
func Mutants(root string) ([]Mutant, error) {
	fs, err := patch.DeclareAll(os.DirFS(root), PatchesDir)
	if err != nil {
		return nil, fmt.Errorf("generate: %w", err)
	}
	out := make([]Mutant, len(fs))
	for i, f := range fs {
		if slices.Contains(reserved, f.String()) {
			return nil, fmt.Errorf("generate: %s/%s.patch: %q is a reserved directory of %s", PatchesDir, f, f, MutantsDir)
		}
		out[i] = Mutant{Fault: f, Patch: PatchesDir + "/" + f.String() + ".patch", Ident: f.Ident}
	}
	return out, nil
}

// CompiledFile is the file of internal/mutants/build that says whether
// the mutants are compiled in: its committed form says no, the overlay's
// yes.
const CompiledFile = MutantsDir + "/build/compiled.go"

// Committed returns the files the generator writes into the tree, in a
// fixed order: the explorer's copies of impl/ (ExploredDir), and the
// constructors files of internal/sut, backends/redissut and
// backends/etcdsut in their form without mutants (only the real tables).
// Nothing in them comes from a patch.
func Committed(root string) ([]File, error) {
	mod, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	if err := checkPrimitives(root); err != nil {
		return nil, err
	}
	var out []File
	for _, credits := range []bool{true, false} {
		fs, err := exploredFiles(root, mod, primitives[credits])
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	tables, err := constructorFiles(mod, nil)
	if err != nil {
		return nil, err
	}
	out = append(out, tables...)
	return append(out, File{Path: CompiledFile, Data: compiledFile(false)}), nil
}

// Overlay returns the files that build the mutants, never written into the
// tree but handed to the go command as an -overlay (internal/mutants/build):
// each mutant package of the in-memory tables, each of the Redis-backed
// tables (redis.go), each of the etcd-backed tables (etcd.go), the
// constructors files with a case per mutant (replacing the committed forms
// at their paths), and CompiledFile saying the mutants are compiled in.
func Overlay(root string) ([]File, error) { return OverlayOf(root) }

// OverlayOf is Overlay for the mutants named (all of them when none is),
// every patch's header still read and checked.
func OverlayOf(root string, names ...string) ([]File, error) {
	mod, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	if err := checkPrimitives(root); err != nil {
		return nil, err
	}
	ms, err := Mutants(root)
	if err != nil {
		return nil, err
	}
	if len(names) > 0 {
		ms = slices.DeleteFunc(ms, func(m Mutant) bool { return !slices.Contains(names, m.Name()) })
	}
	var out []File
	for _, m := range ms {
		fs, err := packageFiles(root, mod, m)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	tables, err := constructorFiles(mod, ms)
	if err != nil {
		return nil, err
	}
	out = append(out, tables...)
	return append(out, File{Path: CompiledFile, Data: compiledFile(true)}), nil
}

// packageFiles returns the files of m's package.
func packageFiles(root, mod string, m Mutant) ([]File, error) {
	switch {
	case m.Fault.Redis():
		return redisMutantFiles(root, mod, m)
	case m.Fault.Etcd():
		return etcdMutantFiles(root, mod, m)
	}
	return mutantFiles(root, mod, m)
}

// constructorFiles returns TablesFile, RedisTablesFile and EtcdTablesFile
// with a case for each mutant of ms.
func constructorFiles(mod string, ms []Mutant) ([]File, error) {
	memory, redis, etcd := splitBackends(ms)
	tables, err := tablesFile(mod, memory)
	if err != nil {
		return nil, err
	}
	redisTables, err := redisTablesFile(mod, redis)
	if err != nil {
		return nil, err
	}
	etcdTables, err := etcdTablesFile(mod, etcd)
	if err != nil {
		return nil, err
	}
	return []File{{TablesFile, tables}, {RedisTablesFile, redisTables}, {EtcdTablesFile, etcdTables}}, nil
}

// compiledFile returns CompiledFile's text: compiled says whether it is
// the overlay's form.
func compiledFile(compiled bool) []byte {
	return []byte(fmt.Sprintf(`// Code generated by go run ./%s/gen; DO NOT EDIT.

package build

// compiled reports whether this binary was built with the overlay of the
// mutants (Overlay): the file on disk says false, the overlay's form true.
const compiled = %v
`, MutantsDir, compiled))
}

func checkPrimitives(root string) error {
	for _, credits := range []bool{true, false} {
		if err := primitives[credits].checkFiles(root); err != nil {
			return err
		}
	}
	return nil
}

// checkFiles fails when impl/<p> holds a non-test Go file that p does not
// classify, so a new file is never silently left out of the mutants.
func (p primitive) checkFiles(root string) error {
	names, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p.dir()), "*.go"))
	if err != nil {
		return err
	}
	known := slices.Concat(p.tables, p.values, p.rewritten, p.unused)
	for _, n := range names {
		base := filepath.Base(n)
		if strings.HasSuffix(base, "_test.go") || slices.Contains(known, base) {
			continue
		}
		return fmt.Errorf("generate: %s/%s is neither a table file nor a value-type file of the mutants: list it in internal/mutants/internal/generate", p.dir(), base)
	}
	for _, base := range known {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p.dir()), base)); err != nil {
			return fmt.Errorf("generate: %s/%s is listed in internal/mutants/internal/generate but %v", p.dir(), base, err)
		}
	}
	return nil
}

// ModulePath reads the module path from root's go.mod: the one reader of
// it for the generator and the automatic mutation campaign
// (internal/mutants/auto).
func ModulePath(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("%s has no module line", filepath.Join(root, "go.mod"))
}

func modulePath(root string) (string, error) { return ModulePath(root) }

// Owned lists the files on disk under root that the generator writes
// (Committed): every file below ExploredDir and the constructors files. A
// file owned but not generated is stale.
func Owned(root string) ([]string, error) {
	var out []string
	base := filepath.Join(root, filepath.FromSlash(ExploredDir))
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, f := range []string{TablesFile, RedisTablesFile, EtcdTablesFile, CompiledFile} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err == nil {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}
