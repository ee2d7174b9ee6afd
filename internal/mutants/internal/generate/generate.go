// Package generate builds the mutant packages of internal/mutants from
// their patches, in memory: internal/mutants/gen writes what it returns, and
// the drift test of internal/mutants compares it with the files on disk.
package generate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tollgate/tollgate/internal/fault"
)

// Paths, relative to the module root and slash-separated.
const (
	MutantsDir = "internal/mutants"
	PatchesDir = MutantsDir + "/patches"
	TablesFile = "internal/sut/tables_gen.go"
	faultFile  = "internal/fault/fault.go"
	// Command is how to regenerate, as error messages say it.
	Command = "go generate ./internal/mutants"
)

// reserved are the directories of internal/mutants that are not mutant
// packages. (explored holds generated packages too, but no mutant may take
// its name.)
var reserved = []string{"explored", "gen", "internal", "patch", "patches", "testdata"}

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
		tables: []string{"stats_off.go", "stats_on.go", "tokenbucket.go", "trie.go", "wait.go"},
		values: []string{"types.go"},
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

// Mutant is one patch and the fault it names.
type Mutant struct {
	Fault fault.Fault
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

// Mutants lists the patches under root in fault declaration order, and
// fails unless patches and faults match one to one.
func Mutants(root string) ([]Mutant, error) {
	names, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(PatchesDir), "*.patch"))
	if err != nil {
		return nil, err
	}
	idents, err := faultIdents(root)
	if err != nil {
		return nil, err
	}
	byFault := map[fault.Fault]Mutant{}
	var problems []string
	for _, n := range names {
		base := strings.TrimSuffix(filepath.Base(n), ".patch")
		f, err := fault.Parse(base)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s/%s.patch names no fault: add its constant and name to %s, or rename the patch (%v)", PatchesDir, base, faultFile, err))
			continue
		}
		if slices.Contains(reserved, base) {
			problems = append(problems, fmt.Sprintf("%s/%s.patch: %q is a reserved directory of %s", PatchesDir, base, base, MutantsDir))
			continue
		}
		ident, ok := idents[base]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no entry for %q in the names table", faultFile, base))
			continue
		}
		byFault[f] = Mutant{Fault: f, Patch: PatchesDir + "/" + base + ".patch", Ident: ident}
	}
	var out []Mutant
	for _, f := range fault.Every() {
		m, ok := byFault[f]
		if !ok {
			problems = append(problems, fmt.Sprintf("fault %s (%s) has no patch %s/%s.patch", f, idents[f.String()], PatchesDir, f))
			continue
		}
		out = append(out, m)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("generate: patches and faults do not match:\n\t%s", strings.Join(problems, "\n\t"))
	}
	return out, nil
}

// faultIdents maps each fault name to its constant's identifier, read from
// the keyed names table of internal/fault (`CrNoEpochPin: "cr-no-epoch-pin"`).
func faultIdents(root string) (map[string]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(faultFile)), nil, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Names) != 1 || vs.Names[0].Name != "names" || len(vs.Values) != 1 {
				continue
			}
			lit, ok := vs.Values[0].(*ast.CompositeLit)
			if !ok {
				continue
			}
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					return nil, fmt.Errorf("%s: the names table must be keyed by the fault constants", faultFile)
				}
				id, ok1 := kv.Key.(*ast.Ident)
				bl, ok2 := kv.Value.(*ast.BasicLit)
				if !ok1 || !ok2 || bl.Kind != token.STRING {
					return nil, fmt.Errorf("%s:%v: the names table must map a constant to a string literal", faultFile, fset.Position(kv.Pos()).Line)
				}
				name, _ := strconv.Unquote(bl.Value)
				out[name] = id.Name
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("%s: no names table (var names = [...]string{...})", faultFile)
}

// Generate returns every file the generator owns, in a fixed order: each
// mutant package of the in-memory tables, each of the Redis-backed tables
// (redis.go), internal/sut/tables_gen.go, then RedisTablesFile when some
// fault is of a Redis-backed table.
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
	memory, redis := splitRedis(ms)
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
	tables, err := tablesFile(mod, memory)
	if err != nil {
		return nil, err
	}
	out = append(out, File{Path: TablesFile, Data: tables})
	if len(redis) > 0 {
		tables, err := redisTablesFile(mod, redis)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: RedisTablesFile, Data: tables})
	}
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

// modulePath reads the module path from root's go.mod.
func modulePath(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("generate: go.mod has no module line")
}

// Owned lists the files on disk under root that the generator owns: every
// file below a mutant directory of internal/mutants (any directory but the
// reserved ones), internal/sut/tables_gen.go and RedisTablesFile. A file owned but not
// generated is stale.
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
	for _, f := range []string{TablesFile, RedisTablesFile} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err == nil {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out, nil
}
