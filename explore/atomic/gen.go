//go:build ignore

// gen writes atomic_gen.go: every function of sync/atomic, and every type
// with its methods, each operation a switch point. Run it with go generate
// in this directory.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"log"
	"os"
	"strings"
	"text/template"
)

// op is one kind of operation: how its Access is filled in.
type op struct {
	Name   string // the hooked.Op
	Result string // the variable the real operation's result goes to; "" for none
	Fields string // the Access fields besides Word, Op and Site
}

var (
	load = op{"Load", "v", "Old: v, OK: true"}
	stor = op{"Store", "", "New: val, OK: true"}
	swap = op{"Swap", "prev", "Old: prev, New: new, OK: true"}
	cas  = op{"CAS", "ok", "Old: old, New: new, OK: ok"}
	add  = op{"Add", "sum", "Old: sum - delta, New: sum, OK: true"}
	and  = op{"And", "prev", "Old: prev, New: prev & mask, OK: true"}
	or   = op{"Or", "prev", "Old: prev, New: prev | mask, OK: true"}
)

// fn is one function or method to write.
type fn struct {
	Doc  string // the doc comment, without the slashes
	Decl string // the declaration up to the body
	Word string // the expression of the address of the word
	Call string // the real sync/atomic operation
	op
}

// kind is a value type of sync/atomic: its functions' suffix and its
// methods' type.
type kind struct {
	Name string // Int32, Pointer, ...
	Go   string // the Go type of the values in functions (int32, unsafe.Pointer)
	Of   string // the article and noun for docs: "an int32"
}

var ints = []kind{
	{"Int32", "int32", "an int32"},
	{"Int64", "int64", "an int64"},
	{"Uint32", "uint32", "a uint32"},
	{"Uint64", "uint64", "a uint64"},
	{"Uintptr", "uintptr", "a uintptr"},
}

var ptr = kind{"Pointer", "unsafe.Pointer", "an unsafe.Pointer"}

// funcs are sync/atomic's functions, in the order of its doc.
func funcs() []fn {
	var fs []fn
	all := append(append([]kind{}, ints...), ptr)
	f := func(o op, name, params, results, call, doc string) {
		fs = append(fs, fn{
			Doc:  doc,
			Decl: fmt.Sprintf("func %s(%s) %s", name, params, results),
			Word: "addr",
			Call: call,
			op:   o,
		})
	}
	for _, k := range all {
		n := "Swap" + k.Name
		f(swap, n, "addr *"+k.Go+", new "+k.Go, "(old "+k.Go+")", "atomic."+n+"(addr, new)",
			n+" atomically stores new into *addr and returns the previous *addr value.")
	}
	for _, k := range all {
		n := "CompareAndSwap" + k.Name
		f(cas, n, "addr *"+k.Go+", old, new "+k.Go, "(swapped bool)", "atomic."+n+"(addr, old, new)",
			n+" executes the compare-and-swap operation for "+k.Of+" value.")
	}
	for _, k := range ints {
		n := "Add" + k.Name
		f(add, n, "addr *"+k.Go+", delta "+k.Go, "(new "+k.Go+")", "atomic."+n+"(addr, delta)",
			n+" atomically adds delta to *addr and returns the new value.")
	}
	for _, k := range ints {
		n := "And" + k.Name
		f(and, n, "addr *"+k.Go+", mask "+k.Go, "(old "+k.Go+")", "atomic."+n+"(addr, mask)",
			n+" atomically performs a bitwise AND operation on *addr using the\nbitmask provided as mask and returns the old value.")
	}
	for _, k := range ints {
		n := "Or" + k.Name
		f(or, n, "addr *"+k.Go+", mask "+k.Go, "(old "+k.Go+")", "atomic."+n+"(addr, mask)",
			n+" atomically performs a bitwise OR operation on *addr using the\nbitmask provided as mask and returns the old value.")
	}
	for _, k := range all {
		n := "Load" + k.Name
		f(load, n, "addr *"+k.Go, "(val "+k.Go+")", "atomic."+n+"(addr)",
			n+" atomically loads *addr.")
	}
	for _, k := range all {
		n := "Store" + k.Name
		f(stor, n, "addr *"+k.Go+", val "+k.Go, "", "atomic."+n+"(addr, val)",
			n+" atomically stores val into *addr.")
	}
	return fs
}

// typ is one of sync/atomic's types and its methods.
type typ struct {
	Name    string // Int32, Pointer, ...
	Params  string // type parameters, "[T any]" or ""
	Doc     string
	Methods []fn
}

func types() []typ {
	method := func(recv string, o op, name, params, results, args, doc string) fn {
		return fn{
			Doc:  doc,
			Decl: fmt.Sprintf("func (x *%s) %s(%s) %s", recv, name, params, results),
			Word: "x",
			Call: "x.v." + name + "(" + args + ")",
			op:   o,
		}
	}
	common := func(recv, t string, loadResult string) []fn {
		return []fn{
			method(recv, load, "Load", "", loadResult, "", "Load atomically loads and returns the value stored in x."),
			method(recv, stor, "Store", "val "+t, "", "val", "Store atomically stores val into x."),
			method(recv, swap, "Swap", "new "+t, "(old "+t+")", "new", "Swap atomically stores new into x and returns the previous value."),
			method(recv, cas, "CompareAndSwap", "old, new "+t, "(swapped bool)", "old, new", "CompareAndSwap executes the compare-and-swap operation for x."),
		}
	}
	doc := func(name string) string {
		return name + " is sync/atomic's " + name + " with every operation a switch point."
	}
	ts := []typ{{Name: "Bool", Doc: doc("Bool"), Methods: common("Bool", "bool", "bool")}}
	for _, k := range ints {
		ms := common(k.Name, k.Go, k.Go)
		ms = append(ms,
			method(k.Name, add, "Add", "delta "+k.Go, "(new "+k.Go+")", "delta", "Add atomically adds delta to x and returns the new value."),
			method(k.Name, and, "And", "mask "+k.Go, "(old "+k.Go+")", "mask", "And atomically performs a bitwise AND operation on x using the bitmask\nprovided as mask and returns the old value."),
			method(k.Name, or, "Or", "mask "+k.Go, "(old "+k.Go+")", "mask", "Or atomically performs a bitwise OR operation on x using the bitmask\nprovided as mask and returns the old value."),
		)
		ts = append(ts, typ{Name: k.Name, Doc: doc(k.Name), Methods: ms})
	}
	ts = append(ts, typ{Name: "Pointer", Params: "[T any]", Doc: doc("Pointer"), Methods: common("Pointer[T]", "*T", "*T")})
	vs := common("Value", "any", "(val any)")
	vs[0].Doc = "Load returns the value set by the most recent Store, or nil if there\nhas been none."
	vs[1].Doc = "Store sets the value to val. Every Store to a Value must use values of\none concrete type; a Store of another type, or of nil, panics."
	vs[2].Doc = "Swap stores new and returns the previous value, or nil if there was\nnone. It panics as Store does."
	vs[3].Doc = "CompareAndSwap executes the compare-and-swap operation for the Value.\nIt panics as Store does, and if old and new are not comparable."
	ts = append(ts, typ{Name: "Value", Doc: doc("Value"), Methods: vs})
	return ts
}

var tmpl = template.Must(template.New("").Funcs(template.FuncMap{
	"comment": func(s string) string { return "// " + strings.ReplaceAll(s, "\n", "\n// ") },
}).Parse(`// Code generated by go run gen.go; DO NOT EDIT.

package atomic

import (
	"sync/atomic"
	"unsafe"

	"github.com/tollgate/tollgate/internal/seam/hooked"
)
{{range .Funcs}}{{template "fn" .}}{{end}}
{{- range .Types}}
{{comment .Doc}}
type {{.Name}}{{.Params}} struct{ v atomic.{{.Name}}{{if .Params}}[T]{{end}} }
{{range .Methods}}{{template "fn" .}}{{end}}
{{- end}}

{{- define "fn"}}
{{comment .Doc}}
{{.Decl}} {
	s := hooked.Current()
	if s == nil {
		{{if .Result}}return {{.Call}}{{else}}{{.Call}}
		return{{end}}
	}
	w := unsafe.Pointer({{.Word}})
	s.Before(w, hooked.{{.Name}})
	{{if .Result}}{{.Result}} := {{end}}{{.Call}}
	s.After(hooked.Access{Word: w, Op: hooked.{{.Name}}, {{.Fields}}, Site: hooked.Site(1)})
	{{- if .Result}}
	return {{.Result}}{{end}}
}
{{end}}`))

func main() {
	var b bytes.Buffer
	err := tmpl.Execute(&b, struct {
		Funcs []fn
		Types []typ
	}{funcs(), types()})
	if err != nil {
		log.Fatal(err)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		log.Fatalf("%v\n%s", err, b.Bytes())
	}
	if err := os.WriteFile("atomic_gen.go", src, 0o644); err != nil {
		log.Fatal(err)
	}
}
