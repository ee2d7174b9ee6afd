// Command miscompile reproduces, without etcd or any dependency, the Go
// compiler fault behind spec/etcd.md §6. step reads a local array of rows
// (structs holding strings), hands a copy of one row to a function value,
// calls commit, and reads the same row again. The compiler keeps the
// element's address in a temporary across commit but takes the array
// itself for dead there, so a collection during commit frees the row's
// strings, and the read after it returns freed memory.
//
//	GODEBUG=clobberfree=1 go run ./internal/gcstress/testdata/miscompile
//
// It reports "bad: 1999" or "bad: 2000" (of 2000 reads) and exits 1 with
// go1.24.0, go1.24.11, go1.25.5, go1.26.8 and go1.27.3 on linux/amd64,
// and "bad: 0" with go1.23.12 (in a copy whose go.mod says go 1.23, with
// GOTOOLCHAIN naming the version). `go build -gcflags=-live` shows why: at
// the call to commit only an .autotmp (the element's address) is live,
// not rows.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
)

const Slots = 32

type row struct {
	state  byte
	gen    uint64
	holder string
	mark   int64
	pay    string
	rev    int64
}

func (r row) encode() string { return string([]byte{r.state}) + r.holder + r.pay }

var src = []byte("g1-i2-cXXXXXXXXXXXXXXXXXXXXXXXXX")

//go:noinline
func read(n, i int) (closed bool, rows [Slots + 1]row, r *int, err error) {
	b := append([]byte(nil), src...)
	b[1] = byte('0' + i%10)
	rows[n] = row{state: 2, gen: uint64(i), holder: string(b[:4]), pay: string(b[:24]), rev: int64(i)}
	return false, rows, nil, nil
}

//go:noinline
func commit(rev int64, v string) (bool, error) {
	runtime.GC()
	x := make([][16]byte, 1000) // allocate after the collection
	_ = x
	return len(v) > 0 && rev >= 0, nil
}

func step(n, i int, decide func(r row) (row, bool)) (applied, closed bool, before row, err error) {
	for {
		closed, rows, _, err := read(n, i)
		if err != nil || closed {
			return false, closed, row{}, err
		}
		next, ok := decide(rows[n])
		if !ok {
			return false, false, rows[n], nil
		}
		done, err := commit(rows[n].rev, next.encode())
		if err != nil || done {
			return done, false, rows[n], err // rows must have been live across commit
		}
	}
}

func main() {
	bad := 0
	for i := 0; i < 2000; i++ {
		_, _, was, _ := step(3, i, func(r row) (row, bool) { r.state = 3; return r, r.state == 3 })
		want := "g" + strconv.Itoa(i%10) + "-i2-cXXXXXXXXXXXXXXXXX"
		if was.pay != want {
			bad++
			if bad < 5 {
				fmt.Printf("iteration %d: payload %q, want %q\n", i, was.pay, want)
			}
		}
	}
	fmt.Println("bad:", bad)
	if bad > 0 {
		os.Exit(1)
	}
}
