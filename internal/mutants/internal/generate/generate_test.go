package generate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tollgate/tollgate/impl/credits"
	"github.com/tollgate/tollgate/impl/tokenbucket"
	"github.com/tollgate/tollgate/internal/fault"
	"github.com/tollgate/tollgate/internal/mutants/build"
	"github.com/tollgate/tollgate/internal/mutants/internal/generate"
	"github.com/tollgate/tollgate/internal/sut"
)

// TestTablesComeFromTheirPackage: sut builds the table of the package a
// fault names, and refuses a fault of the other primitive.
func TestTablesComeFromTheirPackage(t *testing.T) {
	build.Need(t)
	pkgOf := func(v any) string { return reflect.TypeOf(v).Elem().PkgPath() }
	crImpl, tbImpl := pkgOf(credits.New[int]()), pkgOf(tokenbucket.New[int]())
	module := strings.TrimSuffix(crImpl, "/impl/credits")
	if got := pkgOf(sut.NewCrTable[int](fault.None)); got != crImpl {
		t.Errorf("NewCrTable(None) is from %s", got)
	}
	if got := pkgOf(sut.NewTBTable[int](fault.None)); got != tbImpl {
		t.Errorf("NewTBTable(None) is from %s", got)
	}
	for _, f := range fault.All() {
		want := module + "/" + generate.MutantsDir + "/" + f.String()
		build, wrong := func() any { return sut.NewCrTable[int](f) }, func() any { return sut.NewTBTable[int](f) }
		if !f.Credits() {
			build, wrong = wrong, build
		}
		if got := pkgOf(build()); got != want {
			t.Errorf("%v: the table is from %s, want %s", f, got, want)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%v: the other primitive's constructor did not panic", f)
				}
			}()
			wrong()
		}()
	}
}

// fakeRoot builds a module root in a temporary directory from the real
// go.mod and impl/ files, with one small patch per fault that changes a
// comment line of the primitive's stats_off.go, under the header fields of
// the fault's real patch. It returns the root and that patch's text for f.
func fakeRoot(t *testing.T) (string, func(f fault.Fault) string) {
	t.Helper()
	real, err := generate.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyFile := func(rel string) {
		data, err := os.ReadFile(filepath.Join(real, rel))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyFile("go.mod")
	for _, pkg := range []string{"credits", "tokenbucket", "redis/tokenbucket", "redis/credits", "etcd/tokenbucket", "etcd/credits"} {
		names, _ := filepath.Glob(filepath.Join(real, "impl", pkg, "*"))
		for _, n := range names {
			if st, err := os.Stat(n); err == nil && st.Mode().IsRegular() && !strings.HasSuffix(n, "_test.go") {
				copyFile(filepath.Join("impl", pkg, filepath.Base(n)))
			}
		}
	}
	text := func(f fault.Fault) string {
		// In-memory mutants change the first line of the stats comment, the
		// Redis ones the third line of the Lua library, the etcd ones the
		// first comment line after the package's imports.
		rel, at := f.Package()+"/stats_off.go", 5
		switch {
		case f.Redis():
			rel, at = f.Package()+"/"+filepath.Base(f.Package())+".lua", 3
		case f.Etcd():
			rel = f.Package() + "/" + filepath.Base(f.Package()) + ".go"
		}
		data, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if f.Etcd() {
			lines := strings.Split(string(data), "\n")
			imports := slices.Index(lines, "import (")
			at = imports + slices.IndexFunc(lines[imports:], func(l string) bool { return strings.HasPrefix(l, "// ") }) + 1
		}
		line := strings.Split(string(data), "\n")[at-1]
		orig, err := os.ReadFile(filepath.Join(real, generate.PatchesDir, f.String()+".patch"))
		if err != nil {
			t.Fatal(err)
		}
		comment, _, _ := strings.Cut(string(orig), "\n--- a/")
		fields := comment[strings.LastIndex(strings.TrimSpace(comment), "\n\n")+2:]
		return fmt.Sprintf("%s: a test patch (T1, C1).\n\n%s\n--- a/%s\n+++ b/%s\n@@ -%d +%d @@\n-%s\n+%s (%s)\n", f, fields, rel, rel, at, at, line, line, f)
	}
	for _, f := range fault.Every() {
		writePatch(t, dir, f.String(), text(f))
	}
	return dir, text
}

// generateAll returns the committed files and the overlay's of the
// mutants named, in that order.
func generateAll(root string, names ...string) ([]generate.File, error) {
	c, err := generate.Committed(root)
	if err != nil {
		return nil, err
	}
	o, err := generate.OverlayOf(root, names...)
	return append(c, o...), err
}

func writePatch(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(generate.PatchesDir), name+".patch")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGenerateFakeRoot(t *testing.T) {
	root, _ := fakeRoot(t)
	files, err := generateAll(root, "cr-sweep-all", "tb-no-clamp", "cr-no-epoch-pin", "rtb-tostring", "ecr-reserve-no-compare", "etb-take-no-compare")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range files {
		got[f.Path] = string(f.Data)
	}
	checkMemoryMutants(t, got)
	checkLayouts(t, got)
	checkRedisMutant(t, got)
	checkEtcdMutant(t, got)
}

// checkMemoryMutants: an in-memory mutant's files are impl's with its
// patch, its value types aliases, and internal/sut builds it.
func checkMemoryMutants(t *testing.T, got map[string]string) {
	stats := got["internal/mutants/cr-sweep-all/stats_off.go"]
	if !strings.HasPrefix(stats, "// Code generated by go run ./internal/mutants/gen from internal/mutants/patches/cr-sweep-all.patch; DO NOT EDIT.\n\n//go:build !tollgate_stats\n") ||
		!strings.Contains(stats, "(cr-sweep-all)\n") {
		t.Errorf("cr-sweep-all/stats_off.go:\n%s", stats)
	}
	body := got["internal/mutants/tb-no-clamp/tokenbucket.go"]
	if strings.Contains(body, "// Package tokenbucket") || !strings.Contains(body, "\npackage tokenbucket\n") {
		t.Errorf("tb-no-clamp/tokenbucket.go keeps impl's package doc or lost its clause:\n%.400s", body)
	}
	if !strings.Contains(body, `&ArgError{Field: "capacity", Value: lim.Capacity, Rule: finitePositive}`) {
		t.Errorf("tb-no-clamp/tokenbucket.go: the ArgError literals are not keyed")
	}
	aliases := got["internal/mutants/cr-no-epoch-pin/aliases.go"]
	for _, want := range []string{
		"// Package credits is the cr-no-epoch-pin mutant of impl/credits",
		`import "github.com/tollgate/tollgate/impl/credits"`,
		"Entry[P any] = credits.Entry[P]",
		"Holder       = credits.Holder",
		"Slots         = credits.Slots",
	} {
		if !strings.Contains(aliases, want) {
			t.Errorf("cr-no-epoch-pin/aliases.go lacks %q:\n%s", want, aliases)
		}
	}
	if _, ok := got["internal/mutants/cr-no-epoch-pin/owner.go"]; ok {
		t.Error("owner.go was copied")
	}
	if !strings.Contains(got[generate.TablesFile], "case \"cr-no-epoch-pin\":\n\t\treturn crnoepochpin.New[P]()") {
		t.Errorf("tables_gen.go:\n%s", got[generate.TablesFile])
	}
}

// checkLayouts: layout.go names the words through the copy's own fields,
// and reads the trie's and the box's by name.
func checkLayouts(t *testing.T, got map[string]string) {
	for path, wants := range map[string][]string{
		"internal/mutants/cr-no-epoch-pin/layout.go": {
			"for i0 := range l.slots {\n\t\tw = append(w, layout.PairWord(fmt.Sprintf(\"slots[%d].word\", i0), &l.slots[i0].word))",
			`w = append(w, layout.BoolWord("closed", &l.closed))`,
			"return layout.Box{Gen: b.gen, Payload: b.payload, MarkedMs: b.markedMs, Fields: []layout.Field{",
		},
		"internal/mutants/explored/tokenbucket/layout.go": {
			"// Code generated by go run ./internal/mutants/gen from impl/tokenbucket; DO NOT EDIT.\n",
			`w = append(w, layout.PointerWord("buckets", &l.buckets))`,
			"(*trie[K])(t).hash = h",
			"return unsafe.Pointer(w), unsafe.Pointer(hooked.Peek(w))",
		},
	} {
		for _, want := range wants {
			if !strings.Contains(got[path], want) {
				t.Errorf("%s lacks %q:\n%s", path, want, got[path])
			}
		}
	}
}

// checkRedisMutant: a Redis mutant is the whole package: the Lua library
// keeps its "#!lua" line first, the Go files lose their package doc, and
// mutant.go renames the library.
func checkRedisMutant(t *testing.T, got map[string]string) {
	lua := got["internal/mutants/rtb-tostring/tokenbucket.lua"]
	if !strings.HasPrefix(lua, "#!lua name=tollgate_tb\n-- Code generated by go run ./internal/mutants/gen from internal/mutants/patches/rtb-tostring.patch; DO NOT EDIT.\n") ||
		!strings.Contains(lua, "(rtb-tostring)\n") {
		t.Errorf("rtb-tostring/tokenbucket.lua:\n%.600s", lua)
	}
	goFile := got["internal/mutants/rtb-tostring/tokenbucket.go"]
	if !strings.HasPrefix(goFile, "// Code generated by go run ./internal/mutants/gen from internal/mutants/patches/rtb-tostring.patch; DO NOT EDIT.\n") ||
		strings.Contains(goFile, "// Package tokenbucket") || !strings.Contains(goFile, "\npackage tokenbucket\n") {
		t.Errorf("rtb-tostring/tokenbucket.go:\n%.400s", goFile)
	}
	if m := got["internal/mutants/rtb-tostring/mutant.go"]; !strings.Contains(m, `func init() { library += "_rtb_tostring" }`) ||
		!strings.Contains(m, "// Package tokenbucket is the rtb-tostring mutant of impl/redis/tokenbucket") {
		t.Errorf("rtb-tostring/mutant.go:\n%s", m)
	}
	if _, ok := got["internal/mutants/rtb-tostring/tokenbucket_test.go"]; ok {
		t.Error("a test file of impl/redis/tokenbucket was copied")
	}
	if r := got[generate.RedisTablesFile]; !strings.Contains(r, "case \"rtb-tostring\":\n\t\treturn rtbtostring.New(ctx, opts, name)") ||
		!strings.Contains(r, "func newRedisTokenbucket(ctx context.Context, f fault.Fault, opts *goredis.Options, name string) (redisTokenbucketTable, error)") {
		t.Errorf("%s:\n%s", generate.RedisTablesFile, r)
	}
}

// checkEtcdMutant: an etcd mutant is the whole package too, with no
// library to rename; EtcdTablesFile builds it by its NewFromClient.
func checkEtcdMutant(t *testing.T, got map[string]string) {
	if m := got["internal/mutants/ecr-reserve-no-compare/mutant.go"]; strings.Contains(m, "library") ||
		!strings.Contains(m, "// Package credits is the ecr-reserve-no-compare mutant of impl/etcd/credits") {
		t.Errorf("ecr-reserve-no-compare/mutant.go:\n%s", m)
	}
	if body := got["internal/mutants/ecr-reserve-no-compare/credits.go"]; !strings.Contains(body, "(ecr-reserve-no-compare)\n") ||
		strings.Contains(body, "// Package credits") {
		t.Errorf("ecr-reserve-no-compare/credits.go:\n%.600s", body)
	}
	if _, ok := got["internal/mutants/etb-take-no-compare/tokenbucket_test.go"]; ok {
		t.Error("a test file of impl/etcd/tokenbucket was copied")
	}
	if r := got[generate.EtcdTablesFile]; !strings.Contains(r, "case \"ecr-reserve-no-compare\":\n\t\tt, err := ecrreservenocompare.NewFromClient(ctx, c, name)") ||
		!strings.Contains(r, "return etcdCredits[*ecrreservenocompare.Holder]{t}, nil") ||
		!strings.Contains(r, "func newEtcdTokenbucket(f fault.Fault, c *clientv3.Client, name string) (etcdTokenbucketTable, error)") {
		t.Errorf("%s:\n%s", generate.EtcdTablesFile, r)
	}
}

func TestGenerateRejects(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutant string // the mutant whose package shows the error; "" for the committed files
		setup  func(t *testing.T, root string, text func(fault.Fault) string)
		want   string
	}{
		{"a value-type file", "cr-sweep-all", func(t *testing.T, root string, text func(fault.Fault) string) {
			writePatch(t, root, "cr-sweep-all", strings.ReplaceAll(text(fault.Named("cr-sweep-all")), "impl/credits/stats_off.go", "impl/credits/types.go"))
		}, "internal/mutants/patches/cr-sweep-all.patch: patches impl/credits/types.go, but a credits mutant may patch only the table files it copies"},
		{"the other primitive", "cr-sweep-all", func(t *testing.T, root string, text func(fault.Fault) string) {
			writePatch(t, root, "cr-sweep-all", strings.Replace(text(fault.Named("tb-no-clamp")), "Fault: TBNoClamp 19", "Fault: CrSweepAll 3", 1))
		}, "patches impl/tokenbucket/stats_off.go, but a credits mutant may patch only"},
		{"a patch without a fault", "cr-sweep-all", func(t *testing.T, root string, text func(fault.Fault) string) {
			writePatch(t, root, "xx-bogus", text(fault.Named("cr-sweep-all")))
		}, "internal/mutants/patches/xx-bogus.patch names no fault"},
		{"two patches of one fault", "cr-sweep-all", func(t *testing.T, root string, text func(fault.Fault) string) {
			writePatch(t, root, "cr-bogus", text(fault.Named("cr-sweep-all")))
		}, "internal/mutants/patches/cr-bogus.patch and internal/mutants/patches/cr-sweep-all.patch both declare fault 3"},
		{"a fault without a patch", "cr-sweep-all", func(t *testing.T, root string, _ func(fault.Fault) string) {
			if err := os.Remove(filepath.Join(root, "internal/mutants/patches/tb-seed-ceil.patch")); err != nil {
				t.Fatal(err)
			}
		}, "no patch declares fault 18"},
		{"a patch without fields", "tb-no-clamp", func(t *testing.T, root string, text func(fault.Fault) string) {
			writePatch(t, root, "tb-no-clamp", strings.Replace(text(fault.Named("tb-no-clamp")), "Fault: TBNoClamp", "The fault TBNoClamp", 1))
		}, "internal/mutants/patches/tb-no-clamp.patch: the comment's last paragraph must be its fields"},
		{"a layer that is none", "tb-no-clamp", func(t *testing.T, root string, text func(fault.Fault) string) {
			writePatch(t, root, "tb-no-clamp", strings.Replace(text(fault.Named("tb-no-clamp")), "Caught-by: rapid", "Caught-by: unit rapid", 1))
		}, `internal/mutants/patches/tb-no-clamp.patch: Caught-by names "unit", which is no layer`},
		{"an unclassified impl file", "tb-no-clamp", func(t *testing.T, root string, _ func(fault.Fault) string) {
			if err := os.WriteFile(filepath.Join(root, "impl/tokenbucket/extra.go"), []byte("package tokenbucket\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "impl/tokenbucket/extra.go is neither a table file nor a value-type file"},
		{"a Redis mutant outside its package", "rtb-tostring", func(t *testing.T, root string, text func(fault.Fault) string) {
			writePatch(t, root, "rtb-tostring", strings.ReplaceAll(text(fault.Named("rtb-tostring")), "impl/redis/tokenbucket/", "impl/redis/rconn/"))
		}, "patches impl/redis/rconn/tokenbucket.lua, but a mutant of impl/redis/tokenbucket may patch only its files"},
		{"a Redis package with no library variable", "rtb-tostring", func(t *testing.T, root string, _ func(fault.Fault) string) {
			p := filepath.Join(root, "impl/redis/tokenbucket/tokenbucket.go")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(data), "var library =", "var libraryName =")), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "impl/redis/tokenbucket declares no package-level var library"},
		{"an etcd mutant outside its package", "ecr-reserve-no-compare", func(t *testing.T, root string, text func(fault.Fault) string) {
			writePatch(t, root, "ecr-reserve-no-compare", strings.ReplaceAll(text(fault.Named("ecr-reserve-no-compare")), "impl/etcd/credits/credits.go", "impl/etcd/econn/credits.go"))
		}, "patches impl/etcd/econn/credits.go, but a mutant of impl/etcd/credits may patch only its files"},
		{"a word renamed", "", func(t *testing.T, root string, _ func(fault.Fault) string) {
			edit(t, root, "impl/credits/credits.go", "\tclosed seam.Bool\n", "\tshut   seam.Bool\n")
		}, "the explorer names the words slots[].word, slots[].holder, slots[].box, closed of credits.Table, which holds slots[].word, slots[].holder, slots[].box, shut instead"},
		{"a word added", "", func(t *testing.T, root string, _ func(fault.Fault) string) {
			edit(t, root, "impl/tokenbucket/tokenbucket.go", "\tclock   func() int64\n", "\tclock   func() int64\n\tepoch   seam.Uint64\n")
		}, "the explorer names the words buckets of tokenbucket.Table, which holds buckets, epoch instead"},
		{"a patch that no longer applies", "tb-no-clamp", func(t *testing.T, root string, text func(fault.Fault) string) {
			writePatch(t, root, "tb-no-clamp", strings.Replace(text(fault.Named("tb-no-clamp")), "\n-//", "\n-// not", 1))
		}, "internal/mutants/patches/tb-no-clamp.patch: hunk 1 (@@ -5 +5 @@) does not apply to impl/tokenbucket/stats_off.go: line 5: expected \"// not"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, text := fakeRoot(t)
			c.setup(t, root, text)
			var err error
			if c.mutant == "" {
				_, err = generate.Committed(root)
			} else {
				_, err = generate.OverlayOf(root, c.mutant)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// edit replaces old, which must occur, by new in the file rel under root.
func edit(t *testing.T, root, rel, old, new string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not hold %q", rel, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOwnedListsEveryGeneratedPlace(t *testing.T) {
	root, _ := fakeRoot(t)
	for _, rel := range []string{"internal/mutants/old-mutant/x.go", "internal/mutants/explored/credits/old.go", "internal/mutants/patch/patch.go", "internal/mutants/doc.go", "internal/sut/tables_gen.go"} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	owned, err := generate.Owned(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"internal/mutants/explored/credits/old.go", "internal/sut/tables_gen.go"}; !reflect.DeepEqual(owned, want) {
		t.Errorf("owned %q, want %q", owned, want)
	}
}

func TestMain(m *testing.M) { build.Main(m) }
