package lazyfs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/tollgate/tollgate/internal/skipnote"
)

// Install is how to get what a mount needs on Debian, as the messages say
// it (fusermount3; /dev/fuse is the kernel's).
const Install = "apt-get update && apt-get install -y fuse3"

// ErrUnavailable reports that this machine cannot mount a FUSE file system.
var ErrUnavailable = errors.New("lazyfs: FUSE is not available")

// Available reports whether this machine can mount: /dev/fuse and
// fusermount3 (or fusermount) on PATH. It does not try a mount.
func Available() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w: no /dev/fuse (%v): the kernel has no FUSE, or the container does not pass it through", ErrUnavailable, err)
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		if _, err := exec.LookPath("fusermount"); err != nil {
			return fmt.Errorf("%w: no fusermount3 on PATH (install it: %s)", ErrUnavailable, Install)
		}
	}
	return nil
}

// Mount is a lazyfs mount of a backing directory. Its methods are safe for
// concurrent use.
type Mount struct {
	Dir     string // the mount point
	Backing string // the backing directory: what survives a power loss

	mu     sync.Mutex
	server *fuse.Server // nil once unmounted
	st     *state
	lies   bool // SetFsyncLies, kept across Remount
}

// New mounts a lazyfs of the backing directory at dir (both must exist;
// dir should be empty). Whatever a previous mount left in the backing
// directory's trash is deleted first.
func New(backing, dir string) (*Mount, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	m := &Mount{Dir: dir, Backing: backing}
	if err := m.mount(); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Mount) mount() error {
	st, err := newState(m.Backing)
	if err != nil {
		return err
	}
	m.Backing = st.root
	st.lies = m.lies // before the mount serves anyone
	sec := time.Second
	root := &node{s: st}
	server, err := fs.Mount(m.Dir, root, &fs.Options{
		EntryTimeout: &sec,
		AttrTimeout:  &sec,
		MountOptions: fuse.MountOptions{FsName: "lazyfs:" + st.root, Name: "lazyfs", DisableXAttrs: true, MaxWrite: 1 << 20},
	})
	if err != nil {
		return fmt.Errorf("lazyfs: mounting %s at %s: %w", st.root, m.Dir, err)
	}
	m.server, m.st = server, st
	return nil
}

// SetFsyncLies makes fsync and fdatasync, of files and of directories,
// answer success and make nothing durable while on (and across Remount):
// a disk whose volatile write cache ignores flushes. It is the negative
// control of a power-loss check: a store that is durable only because it
// fsyncs must lose acknowledged writes on such a disk.
func (m *Mount) SetFsyncLies(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lies = on
	if m.st != nil {
		m.st.mu.Lock()
		m.st.lies = on
		m.st.mu.Unlock()
	}
}

// PowerLoss drops every write and truncation not fsynced and undoes every
// directory operation not committed by a directory fsync; from then on
// every operation on the mount fails with EIO, until Remount. It returns
// what it dropped.
func (m *Mount) PowerLoss() (Loss, error) {
	m.mu.Lock()
	st := m.st
	m.mu.Unlock()
	if st == nil {
		return Loss{}, errors.New("lazyfs: PowerLoss: not mounted")
	}
	return st.powerLoss()
}

// Unmount unmounts. A mount that has not lost power first writes every
// cache to the backing directory and commits every directory operation,
// as a clean shutdown does. While a process still has a file of the mount
// open it retries for a while, then detaches the mount lazily (it goes
// once the last file is closed) and returns an error saying so. Calls
// after one that unmounted or detached do nothing.
func (m *Mount) Unmount() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.server == nil {
		return nil
	}
	if err := m.st.shutdown(); err != nil {
		return err
	}
	var err error
	for range 5 { // each a few tries of go-fuse's, some 300 ms
		if err = m.server.Unmount(); err == nil {
			m.server = nil
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Nothing left behind: detached now, unmounted once the last file of
	// it is closed.
	if lerr := exec.Command("fusermount3", "-u", "-z", m.Dir).Run(); lerr == nil {
		m.server = nil
		return fmt.Errorf("lazyfs: unmounting %s: %w (detached it lazily: it goes once its last open file is closed)", m.Dir, err)
	}
	return fmt.Errorf("lazyfs: unmounting %s: %w", m.Dir, err)
}

// Remount unmounts (see Unmount) and mounts the backing directory at the
// same mount point again: after a power loss, the mount then shows what
// was durable, with no cache of the old one in the kernel.
func (m *Mount) Remount() error {
	if err := m.Unmount(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mount()
}

// shutdown syncs every cache and commits the whole journal, unless the
// state lost power; either way it ends the state (every later operation
// fails with EIO).
func (s *state) shutdown() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return nil
	}
	var errs []error
	for _, f := range s.files {
		if err := f.sync(); err != nil {
			errs = append(errs, err)
		}
		f.fd.Close()
	}
	for _, op := range s.journal {
		if op.commit != nil {
			if err := op.commit(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	s.files, s.journal, s.dead = nil, nil, true
	if err := os.RemoveAll(s.trash); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("lazyfs: clean shutdown: %w", errors.Join(errs...))
	}
	return nil
}

// Control serves a FIFO at path, made here, until stop is called: each
// line "power-loss" written to it does what PowerLoss does, and report (if
// not nil) is told the outcome. Any other line is reported as an error.
// stop removes the FIFO.
func (m *Mount) Control(path string, report func(Loss, error)) (stop func(), err error) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("lazyfs: making the control FIFO: %w", err)
	}
	// Opened read-write, so that it stays open when writers come and go,
	// and so that stop can wake the reader with a line of its own.
	fifo, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("lazyfs: opening the control FIFO: %w", err)
	}
	if report == nil {
		report = func(Loss, error) {}
	}
	done := make(chan struct{})
	const quit = "\x00quit"
	go func() {
		defer close(done)
		sc := bufio.NewScanner(fifo)
		for sc.Scan() {
			switch line := strings.TrimSpace(sc.Text()); line {
			case quit:
				return
			case "power-loss":
				report(m.PowerLoss())
			case "":
			default:
				report(Loss{}, fmt.Errorf("lazyfs: control: unknown command %q (want \"power-loss\")", line))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			fmt.Fprintln(fifo, quit)
			<-done
			fifo.Close()
			os.Remove(path)
		})
	}, nil
}

// MountT mounts a lazyfs of backing at dir for t and unmounts it when t
// ends. Without FUSE it skips t, saying how to install it, or fails it
// under CI=true.
func MountT(t testing.TB, backing, dir string) *Mount {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI must be able to mount FUSE (%s)", err, Install)
		}
		why := err
		if !strings.Contains(err.Error(), Install) {
			why = fmt.Errorf("%w (install: %s)", err, Install)
		}
		skipnote.Missing("FUSE", why) // shown without -v
		t.Skipf("%v (install: %s)", err, Install)
	}
	m, err := New(backing, dir)
	if err != nil {
		t.Fatalf("%v (this machine has /dev/fuse and fusermount3, and still cannot mount)", err)
	}
	t.Cleanup(func() {
		if err := m.Unmount(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return m
}
