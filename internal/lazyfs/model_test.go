package lazyfs_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// inode is the model of one file: what a reader sees, and what its last
// fsync made durable.
type inode struct{ live, durable []byte }

// model is one directory: the entries a reader sees, and those its last
// fsync made durable (in one directory, a directory fsync commits every
// operation before it).
type model struct{ live, durable map[string]*inode }

// TestRandomOperationsAgainstAModel runs random writes, truncations,
// fsyncs, creations, renames and unlinks in one directory, with power
// losses among them, and compares the mount after every step with a model
// that says what a reader sees and what survives: a file's data as of its
// last fsync, the directory's entries as of its last fsync.
func TestRandomOperationsAgainstAModel(t *testing.T) {
	t.Parallel() // beside the busy unmount's wait
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			m := mount(t)
			rng := rand.New(rand.NewPCG(seed, 46))
			md := model{live: map[string]*inode{}, durable: map[string]*inode{}}
			names := []string{"a", "b", "c", "d"}
			var log []string
			for step := range 80 {
				name, other := names[rng.IntN(len(names))], names[rng.IntN(len(names))]
				p := filepath.Join(m.Dir, name)
				in, exists := md.live[name]
				var what string
				op := rng.IntN(10)
				if !exists && op != 6 && op != 9 {
					op = 0 // a file to act on first
				}
				switch {
				case op == 0:
					what = "create " + name
					f, err := os.Create(p) // O_TRUNC on an existing file
					must(t, err)
					must(t, f.Close())
					if !exists {
						in = &inode{}
						md.live[name] = in
					}
					in.live = nil
				case op < 4:
					off := rng.IntN(6000)
					data := bytes.Repeat([]byte{byte('a' + step%26)}, 1+rng.IntN(5000))
					what = fmt.Sprintf("write %s %d bytes at %d", name, len(data), off)
					f, err := os.OpenFile(p, os.O_WRONLY, 0)
					must(t, err)
					_, err = f.WriteAt(data, int64(off))
					must(t, err)
					must(t, f.Close())
					if end := off + len(data); end > len(in.live) {
						in.live = append(in.live, make([]byte, end-len(in.live))...)
					}
					copy(in.live[off:], data)
				case op == 4:
					n := rng.IntN(7000)
					what = fmt.Sprintf("truncate %s %d", name, n)
					must(t, os.Truncate(p, int64(n)))
					if n <= len(in.live) {
						in.live = in.live[:n]
					} else {
						in.live = append(in.live, make([]byte, n-len(in.live))...)
					}
				case op == 5:
					what = "fsync " + name
					f, err := os.OpenFile(p, os.O_RDONLY, 0)
					must(t, err)
					must(t, f.Sync())
					must(t, f.Close())
					in.durable = slices.Clone(in.live)
				case op == 6:
					what = "fsync the directory"
					syncDir(t, m.Dir)
					md.durable = map[string]*inode{}
					for k, v := range md.live {
						md.durable[k] = v
					}
				case op == 7:
					what = "rename " + name + " " + other
					must(t, os.Rename(p, filepath.Join(m.Dir, other)))
					delete(md.live, name)
					md.live[other] = in
				case op == 8:
					what = "unlink " + name
					must(t, os.Remove(p))
					delete(md.live, name)
				default:
					what = "power loss"
					powerLoss(t, m)
					md.live = map[string]*inode{}
					for k, v := range md.durable {
						v.live = slices.Clone(v.durable)
						md.live[k] = v
					}
				}
				log = append(log, what)
				for _, n := range names {
					got, ok := read(t, filepath.Join(m.Dir, n))
					want, wok := md.live[n]
					switch {
					case ok != wok:
						t.Fatalf("after %q: %s exists: %v, the model says %v (steps: %q)", log[len(log)-1], n, ok, wok, log)
					case ok && !bytes.Equal([]byte(got), want.live):
						t.Fatalf("after %q: %s holds %d bytes, the model %d (steps: %q)", log[len(log)-1], n, len(got), len(want.live), log)
					}
				}
			}
		})
	}
}
