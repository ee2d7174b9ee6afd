package generate

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tollgate/tollgate/internal/mutants/patch"
)

// RedisTablesFile is where the constructors of the Redis-backed tables'
// mutants go: backends/redissut, the adapters of the Redis-backed tables,
// apart from internal/sut so that the in-memory checkers link no Redis
// client.
const RedisTablesFile = RedisTablesDir + "/tables_gen.go"

// RedisTablesDir is RedisTablesFile's package.
const RedisTablesDir = "backends/redissut"

// A mutant of a Redis-backed table (a fault whose Package is under
// impl/redis/) is a copy of the whole package: every file of its directory
// but the tests (Go files, the embedded Lua library, anything else it
// embeds), with the patch applied, which may change any of them. Go files
// lose their package doc and gain the generated-file header; a .lua file
// gains the header as a Lua comment after its "#!lua" line; other files are
// copied as they are. Nothing is aliased: the package's value types are
// already aliases of impl's (Limits, ArgError), so the copy's methods have
// the same signatures as the real ones.
//
// The package must declare a package-level string variable library, the
// name it loads its Functions library under (and the prefix of the
// functions' names). The copy gains mutant.go, whose init appends the
// mutant's name to it, so that a mutant's functions load beside the real
// library on one server instead of replacing it.
//
// Every such package must have New(ctx, *goredis.Options, name string)
// returning its table and an error; RedisTablesFile gets, per package, a
// constructor newRedis<Pkg>(ctx, f, opts, name) (redis<Pkg>Table, error)
// that calls the New of f's package (the real one for fault.None), where
// <Pkg> is the package name with its first letter upper-cased and
// redis<Pkg>Table an interface that RedisTablesDir declares by hand.

// redisPackageFiles lists the files a mutant of the Redis package dir
// copies: every regular file but the tests, sorted.
func redisPackageFiles(root, dir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), "_test.go") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// redisMutantFiles returns m's package: the files of m's Redis package with
// the patch applied, and mutant.go.
func redisMutantFiles(root, mod string, m Mutant) ([]File, error) {
	return packageMutantFiles(root, mod, m, true)
}

// packageMutantFiles returns m's package: a copy of every file of m's
// package (a Redis or an etcd one) but the tests, with the patch applied,
// and mutant.go, the mutant's package doc. With library set (a Redis
// package), the package must declare its Functions library's name, which
// mutant.go renames.
func packageMutantFiles(root, mod string, m Mutant, library bool) ([]File, error) {
	dir := m.Fault.Package()
	bases, err := redisPackageFiles(root, dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.Patch)))
	if err != nil {
		return nil, err
	}
	p, err := patch.Parse(m.Patch, data)
	if err != nil {
		return nil, err
	}
	for _, f := range p.Files {
		d, base := path.Split(f.Path)
		if d != dir+"/" || !slices.Contains(bases, base) {
			return nil, fmt.Errorf("%s: patches %s, but a mutant of %s may patch only its files: %s/{%s}", m.Patch, f.Path, dir, dir, strings.Join(bases, ","))
		}
	}
	var out []File
	pkg, hasLibrary := "", false
	for _, base := range bases {
		target := dir + "/" + base
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(target)))
		if err != nil {
			return nil, err
		}
		if f := p.File(target); f != nil {
			if src, err = f.Apply(m.Patch, src); err != nil {
				return nil, err
			}
		}
		switch path.Ext(base) {
		case ".go":
			if formatted, err := format.Source(src); err != nil {
				return nil, fmt.Errorf("%s applied to %s: %w", m.Patch, target, err)
			} else if !bytes.Equal(formatted, src) {
				return nil, fmt.Errorf("%s applied to %s leaves it not gofmt-formatted: fix the patch", m.Patch, target)
			}
			name, lib, err := goPackageOf(target, src)
			if err != nil {
				return nil, err
			}
			pkg, hasLibrary = name, hasLibrary || lib
			body, err := copyTable("", mod, target, src, nil)
			if err != nil {
				return nil, fmt.Errorf("%s applied to %s: %w", m.Patch, target, err)
			}
			src = append([]byte(header(m)+"\n"), body...)
		case ".lua":
			src = luaHeader(header(m), src)
		}
		out = append(out, File{Path: m.Dir() + "/" + base, Data: src})
	}
	if pkg == "" {
		return nil, fmt.Errorf("generate: %s has no Go files", dir)
	}
	if library && !hasLibrary {
		return nil, fmt.Errorf("generate: %s declares no package-level var library (the name of its Functions library, which a mutant renames)", dir)
	}
	doc := fmt.Sprintf("Package %[1]s is the %[2]s mutant of %[3]s: a copy of the package with %[4]s applied. "+
		"It is deliberately broken, for tollgate's checkers only.", pkg, m.Name(), dir, m.Patch)
	if library {
		doc += " Its Functions library loads under its own name " +
			"(the real one with the mutant's name appended), so it never replaces the real library on a shared server."
	}
	var b bytes.Buffer
	b.WriteString(header(m))
	fmt.Fprintf(&b, "\n%spackage %s\n", comment(doc), pkg)
	if library {
		fmt.Fprintf(&b, "\nfunc init() { library += %q }\n", "_"+strings.ReplaceAll(m.Name(), "-", "_"))
	}
	mutant, err := format.Source(b.Bytes())
	if err != nil {
		return nil, err
	}
	if slices.Contains(bases, "mutant.go") {
		return nil, fmt.Errorf("generate: %s/mutant.go would be overwritten by the mutant's own", dir)
	}
	out = append(out, File{Path: m.Dir() + "/mutant.go", Data: mutant})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// goPackageOf returns a Go file's package name and whether it declares a
// package-level var library.
func goPackageOf(name string, src []byte) (string, bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
	if err != nil {
		return "", false, err
	}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, s := range g.Specs {
				for _, id := range s.(*ast.ValueSpec).Names {
					if id.Name == "library" {
						return f.Name.Name, true, nil
					}
				}
			}
		}
	}
	return f.Name.Name, false, nil
}

// luaHeader puts head (a // comment line) into a Lua file as a -- comment,
// after its first line when that is a "#!" line (FUNCTION LOAD needs
// "#!lua name=…" first).
func luaHeader(head string, src []byte) []byte {
	line := []byte("--" + strings.TrimPrefix(head, "//"))
	if bytes.HasPrefix(src, []byte("#!")) {
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			return slices.Concat(src[:i+1], line, src[i+1:])
		}
	}
	return slices.Concat(line, src)
}

// redisTablesFile returns RedisTablesFile: per Redis package that some
// fault names, the constructor of the table of f's package.
func redisTablesFile(mod string, ms []Mutant) ([]byte, error) {
	byDir := map[string][]Mutant{}
	dirs := []string{"impl/redis/credits", "impl/redis/tokenbucket"}
	for _, m := range ms {
		byDir[m.Fault.Package()] = append(byDir[m.Fault.Package()], m)
	}
	imports := []string{`"context"`, `"fmt"`, "", `goredis "github.com/redis/go-redis/v9"`, "", fmt.Sprintf("%q", mod+"/internal/fault")}
	var funcs []string
	for _, d := range dirs {
		pkg := path.Base(d)
		real := "redis" + pkg
		imports = append(imports, fmt.Sprintf("%s %q", real, mod+"/"+d))
		title := strings.ToUpper(pkg[:1]) + pkg[1:]
		cases := []string{fmt.Sprintf("case \"none\":\nreturn %s.New(ctx, opts, name)", real)}
		clusterCases := []string{fmt.Sprintf("case \"none\":\nreturn %s.NewCluster(ctx, opts, name)", real)}
		for _, m := range byDir[d] {
			imports = append(imports, fmt.Sprintf("%s %q", importName(m), mod+"/"+m.Dir()))
			cases = append(cases, fmt.Sprintf("case %q:\nreturn %s.New(ctx, opts, name)", m.Name(), importName(m)))
			clusterCases = append(clusterCases, fmt.Sprintf("case %q:\nreturn %s.NewCluster(ctx, opts, name)", m.Name(), importName(m)))
		}
		funcs = append(funcs, fmt.Sprintf(`// newRedis%[1]s returns a new table of f's package, built by its New:
// %[2]s for fault.None, else the mutant package built
// from f's patch. f must be None or a fault of %[2]s; the error
// says how to build the mutants when f's is not compiled in.
func newRedis%[1]s(ctx context.Context, f fault.Fault, opts *goredis.Options, name string) (redis%[1]sTable, error) {
	switch f.String() {
	%[3]s
	}
	if f.Package() != %[2]q {
		panic(fmt.Sprintf("%[4]s: %%v is not a mutant of %[2]s (defect)", f))
	}
	return nil, fault.NotCompiled(%[4]q, f)
}

// newRedis%[1]sCluster is newRedis%[1]s on a Redis Cluster, built by the
// package's NewCluster.
func newRedis%[1]sCluster(ctx context.Context, f fault.Fault, opts *goredis.ClusterOptions, name string) (redis%[1]sTable, error) {
	switch f.String() {
	%[5]s
	}
	if f.Package() != %[2]q {
		panic(fmt.Sprintf("%[4]s: %%v is not a mutant of %[2]s (defect)", f))
	}
	return nil, fault.NotCompiled(%[4]q, f)
}
`, title, d, strings.Join(cases, "\n"), path.Base(RedisTablesDir), strings.Join(clusterCases, "\n")))
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by go run ./%s/gen; DO NOT EDIT.\n\n%s\npackage %s\n\nimport (\n%s\n)\n\n%s",
		MutantsDir, formNote(len(ms)), path.Base(RedisTablesDir), strings.Join(imports, "\n"), strings.Join(funcs, "\n"))
	return format.Source(b.Bytes())
}

// splitBackends separates the mutants of the in-memory tables from those
// of the Redis-backed and the etcd-backed ones.
func splitBackends(ms []Mutant) (memory, redis, etcd []Mutant) {
	for _, m := range ms {
		switch {
		case m.Fault.Redis():
			redis = append(redis, m)
		case m.Fault.Etcd():
			etcd = append(etcd, m)
		default:
			memory = append(memory, m)
		}
	}
	return memory, redis, etcd
}
