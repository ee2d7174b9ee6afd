// Package generate builds the mutant packages of internal/mutants from
// their patches, in memory: internal/mutants/gen writes what it returns, and
// the drift test of internal/mutants compares it with the files on disk.
package generate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
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
var reserved = []string{"auto", "explored", "gen", "internal", "patch", "patches", "testdata"}

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
	// unused are the files a mutant needs neither copied nor aliased.
	unused []string
}

func (p primitive) dir() string { return "impl/" + p.name }

var primitives = map[bool]primitive{
	true: {
		name:   "credits",
		tables: []string{"credits.go", "stats_off.go", "stats_on.go"},
		values: []string{"types.go", "holder.go"},
		unused: []string{"owner.go"},
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
// values, read from each patch's header (Header), and fails unless the
// values run from 1 with no gap and no two patches share a value or an
// identifier.
func Mutants(root string) ([]Mutant, error) {
	names, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(PatchesDir), "*.patch"))
	if err != nil {
		return nil, err
	}
	byValue := map[int]Mutant{}
	byIdent := map[string]string{}
	var problems []string
	for _, n := range names {
		base := strings.TrimSuffix(filepath.Base(n), ".patch")
		rel := PatchesDir + "/" + base + ".patch"
		if slices.Contains(reserved, base) {
			problems = append(problems, fmt.Sprintf("%s: %q is a reserved directory of %s", rel, base, MutantsDir))
			continue
		}
		f, err := readFault(root, rel)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if other, dup := byValue[f.Value]; dup {
			problems = append(problems, fmt.Sprintf("%s and %s both declare fault %d", other.Patch, rel, f.Value))
			continue
		}
		if other, dup := byIdent[f.Ident]; dup {
			problems = append(problems, fmt.Sprintf("%s and %s both declare the constant %s", other, rel, f.Ident))
			continue
		}
		byValue[f.Value], byIdent[f.Ident] = Mutant{Fault: f, Patch: rel, Ident: f.Ident}, rel
	}
	var out []Mutant
	for v := 1; len(out) < len(byValue); v++ {
		m, ok := byValue[v]
		if !ok {
			problems = append(problems, fmt.Sprintf("no patch declares fault %d: the values of the Fault: lines run from 1 with no gap (a new patch takes the next value)", v))
			break
		}
		out = append(out, m)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("generate: the patches' headers do not declare the faults:\n\t%s", strings.Join(problems, "\n\t"))
	}
	return out, nil
}

// Generate returns every file the generator owns, in a fixed order: each
// mutant package of the in-memory tables, each of the Redis-backed tables
// (redis.go), each of the etcd-backed tables (etcd.go),
// internal/sut/tables_gen.go, FaultFile (the faults and the mutant matrix,
// from the patches' headers), then RedisTablesFile when some fault is of a
// Redis-backed table, and EtcdTablesFile (the constructors of the
// etcd-backed tables, real or mutant).
func Generate(root string) ([]File, error) {
	mod, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	for _, credits := range []bool{true, false} {
		if err := primitives[credits].checkFiles(root); err != nil {
			return nil, err
		}
	}
	ms, err := Mutants(root)
	if err != nil {
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
	memory, redis, etcd := splitBackends(ms)
	for _, m := range memory {
		fs, err := mutantFiles(root, mod, m)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	for _, m := range redis {
		fs, err := redisMutantFiles(root, mod, m)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	for _, m := range etcd {
		fs, err := etcdMutantFiles(root, mod, m)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	tables, err := tablesFile(mod, memory)
	if err != nil {
		return nil, err
	}
	out = append(out, File{Path: TablesFile, Data: tables})
	faults := make([]Fault, len(ms))
	for i, m := range ms {
		faults[i] = m.Fault
	}
	fault, err := faultFile(faults)
	if err != nil {
		return nil, err
	}
	out = append(out, File{Path: FaultFile, Data: fault})
	if len(redis) > 0 {
		tables, err := redisTablesFile(mod, redis)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: RedisTablesFile, Data: tables})
	}
	etcdTables, err := etcdTablesFile(mod, etcd)
	if err != nil {
		return nil, err
	}
	out = append(out, File{Path: EtcdTablesFile, Data: etcdTables})
	return out, nil
}

// checkFiles fails when impl/<p> holds a non-test Go file that p does not
// classify, so a new file is never silently left out of the mutants.
func (p primitive) checkFiles(root string) error {
	names, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(p.dir()), "*.go"))
	if err != nil {
		return err
	}
	known := slices.Concat(p.tables, p.values, p.unused)
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

// Owned lists the files on disk under root that the generator owns: every
// file below a mutant directory of internal/mutants (any directory but the
// reserved ones), internal/sut/tables_gen.go, FaultFile, RedisTablesFile
// and EtcdTablesFile. A file owned but not generated is stale.
func Owned(root string) ([]string, error) {
	var out []string
	base := filepath.Join(root, filepath.FromSlash(MutantsDir))
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || (slices.Contains(reserved, e.Name()) && e.Name() != "explored") {
			continue
		}
		err := filepath.WalkDir(filepath.Join(base, e.Name()), func(p string, d os.DirEntry, err error) error {
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
		if err != nil {
			return nil, err
		}
	}
	for _, f := range []string{TablesFile, FaultFile, RedisTablesFile, EtcdTablesFile} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err == nil {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}
