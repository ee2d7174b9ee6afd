package lazyfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
)

// pageSize is the unit of a file's cache: a write dirties the pages it
// touches, each filled first with what a read would have seen.
const pageSize = 4096

// TrashName is the hidden directory at the top of the backing directory
// where unlinked and replaced entries wait until their operation is
// committed or undone. The mount neither shows nor lets anyone make an
// entry of that name at its top.
const TrashName = ".lazyfs-trash"

// errDead is what every operation answers after a power loss.
const errDead = syscall.EIO

// state is a mount's memory: the caches of the files with writes not yet
// fsynced, and the journal of directory operations not yet committed. One
// mutex guards all of it; every operation of the mount holds it from start
// to end, so a power loss falls between two operations, never inside one.
type state struct {
	root  string // the backing directory
	trash string // root/TrashName

	mu      sync.Mutex
	dead    bool             // after PowerLoss: every operation fails with EIO
	lies    bool             // fsync answers success and makes nothing durable (SetFsyncLies)
	files   map[uint64]*file // by backing inode number, while open or unsynced
	journal []nsOp           // uncommitted directory operations, oldest first
	seq     int              // names the next entry moved to the trash
}

func newState(root string) (*state, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("lazyfs: backing directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("lazyfs: backing directory %s is not a directory", root)
	}
	s := &state{root: root, trash: filepath.Join(root, TrashName), files: map[uint64]*file{}}
	// Whatever a previous mount left in the trash (it ended without a
	// power loss or an unmount) is gone, as it would be after a reboot.
	if err := os.RemoveAll(s.trash); err != nil {
		return nil, fmt.Errorf("lazyfs: clearing %s: %w", s.trash, err)
	}
	if err := os.Mkdir(s.trash, 0o700); err != nil {
		return nil, fmt.Errorf("lazyfs: %w", err)
	}
	return s, nil
}

// file is the cache of one backing file: the size readers see, the pages
// written since the last sync, and how much of the backing file a
// truncation since then left visible.
type file struct {
	fd   *os.File // the backing file, read-write; follows renames and unlinks
	ino  uint64
	size int64 // the size a reader sees
	// base: backing bytes at offsets below base are visible where no page
	// covers them; those at or above it read as zeros (a truncation below
	// them since the last sync). base <= size and base <= disk.
	base int64
	disk int64 // the backing file's size
	// pages: written since the last sync, by page index, each pageSize
	// bytes long, zero past size.
	pages   map[int64][]byte
	handles int // open descriptors of the mount on this file
}

// dirty reports whether the file has changes a power loss would drop.
func (f *file) dirty() bool {
	return len(f.pages) > 0 || f.size != f.disk || f.base != f.disk
}

// readDisk fills b with the visible backing bytes at off: the backing file
// below base, zeros at and above it.
func (f *file) readDisk(b []byte, off int64) error {
	clear(b)
	if off >= f.base {
		return nil
	}
	n := min(int64(len(b)), f.base-off)
	if _, err := f.fd.ReadAt(b[:n], off); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// readAt reads what a reader sees at off into b, up to size, and returns
// how many bytes it read (fewer than len(b) only at the end of the file).
func (f *file) readAt(b []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, nil
	}
	n := int(min(int64(len(b)), f.size-off))
	for i := 0; i < n; {
		pos := off + int64(i)
		pg, po := pos/pageSize, int(pos%pageSize)
		if d, ok := f.pages[pg]; ok {
			i += copy(b[i:n], d[po:])
			continue
		}
		// A run of pages the cache does not hold: one read of the disk.
		end := i + pageSize - po
		for end < n {
			if _, ok := f.pages[(off+int64(end))/pageSize]; ok {
				break
			}
			end += pageSize
		}
		end = min(end, n)
		if err := f.readDisk(b[i:end], pos); err != nil {
			return i, err
		}
		i = end
	}
	return n, nil
}

// page returns page pg of the cache, filling it with what a reader sees
// there if it was not dirty yet.
func (f *file) page(pg int64) ([]byte, error) {
	if d, ok := f.pages[pg]; ok {
		return d, nil
	}
	d := make([]byte, pageSize)
	if _, err := f.readAt(d, pg*pageSize); err != nil {
		return nil, err
	}
	f.pages[pg] = d
	return d, nil
}

// writeAt writes data at off into the cache, growing the file if it ends
// past size (the bytes between read as zeros).
func (f *file) writeAt(data []byte, off int64) error {
	for i := 0; i < len(data); {
		pos := off + int64(i)
		d, err := f.page(pos / pageSize)
		if err != nil {
			return err
		}
		i += copy(d[pos%pageSize:], data[i:])
	}
	f.size = max(f.size, off+int64(len(data)))
	return nil
}

// truncate sets the size a reader sees to n: shrinking drops the pages past
// n, zeros the tail of the page n falls in and hides the backing bytes past
// n; growing reads zeros past the old size (every byte past size is zero in
// the cache or hidden on disk, base <= size).
func (f *file) truncate(n int64) {
	if n < f.size {
		for pg, d := range f.pages {
			switch start := pg * pageSize; {
			case start >= n:
				delete(f.pages, pg)
			case start+pageSize > n:
				clear(d[n-start:])
			}
		}
		f.base = min(f.base, n)
	}
	f.size = n
}

// sync writes the cache to the backing file: first the truncation (the
// bytes past base go), then every dirty page, then the size. It is
// idempotent, so a sync that failed half-way can be tried again. The
// backing file is not fsynced: it stands for the disk, and the power loss
// is simulated.
func (f *file) sync() error {
	if !f.dirty() {
		return nil
	}
	if f.base < f.disk {
		if err := f.fd.Truncate(f.base); err != nil {
			return err
		}
	}
	for pg, d := range f.pages {
		start := pg * pageSize
		if m := min(pageSize, f.size-start); m > 0 {
			if _, err := f.fd.WriteAt(d[:m], start); err != nil {
				return err
			}
		}
	}
	if err := f.fd.Truncate(f.size); err != nil {
		return err
	}
	clear(f.pages)
	f.base, f.disk = f.size, f.size
	return nil
}

// nsOp is one uncommitted directory operation.
type nsOp struct {
	what   string   // for Loss: "rename a -> b"
	dirs   []uint64 // backing inode numbers of the directories whose entries it changed
	undo   func() error
	commit func() error // nil: nothing to do
}

// openFile returns the cache of the backing file at path, opening it (and
// making a cache for it) if the mount has none yet. Call with s.mu held.
func (s *state) openFile(path string) (*file, error) {
	fd, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return s.adopt(fd)
}

// adopt returns the cache of fd's file: an existing one (fd is closed), or
// a new one holding fd.
func (s *state) adopt(fd *os.File) (*file, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(fd.Fd()), &st); err != nil {
		fd.Close()
		return nil, err
	}
	if f, ok := s.files[st.Ino]; ok {
		fd.Close()
		return f, nil
	}
	f := &file{fd: fd, ino: st.Ino, size: st.Size, base: st.Size, disk: st.Size, pages: map[int64][]byte{}}
	s.files[st.Ino] = f
	return f, nil
}

// release forgets f's cache once no descriptor is open on it and it has
// nothing unsynced.
func (s *state) release(f *file) {
	if f.handles == 0 && !f.dirty() && s.files[f.ino] == f {
		delete(s.files, f.ino)
		f.fd.Close()
	}
}

// dirIno is the backing inode number of the directory at path.
func dirIno(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// record appends an operation on the entries of the directories dirs to
// the journal.
func (s *state) record(what string, undo, commit func() error, dirs ...string) error {
	op := nsOp{what: what, undo: undo, commit: commit}
	for _, d := range dirs {
		ino, err := dirIno(d)
		if err != nil {
			return err
		}
		op.dirs = append(op.dirs, ino)
	}
	s.journal = append(s.journal, op)
	return nil
}

// toTrash moves the entry at path into the trash and returns where.
func (s *state) toTrash(path string) (string, error) {
	s.seq++
	t := filepath.Join(s.trash, fmt.Sprint(s.seq))
	return t, os.Rename(path, t)
}

// remove unlinks (dir false) or removes the empty directory (dir true) at
// path: the entry moves to the trash until the operation is committed
// (then it is deleted) or undone (then it comes back).
func (s *state) remove(parent, name string, dir bool) error {
	p := filepath.Join(parent, name)
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return err
	}
	isDir := st.Mode&syscall.S_IFMT == syscall.S_IFDIR
	switch {
	case dir && !isDir:
		return syscall.ENOTDIR
	case !dir && isDir:
		return syscall.EISDIR
	case dir:
		if err := mustBeEmpty(p); err != nil {
			return err
		}
	}
	t, err := s.toTrash(p)
	if err != nil {
		return err
	}
	what := "unlink " + s.rel(p)
	if dir {
		what = "rmdir " + s.rel(p)
	}
	return s.record(what, func() error { return os.Rename(t, p) }, func() error { return os.RemoveAll(t) }, parent)
}

func mustBeEmpty(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if names, _ := d.Readdirnames(1); len(names) > 0 {
		return syscall.ENOTEMPTY
	}
	return nil
}

// rel is path relative to the backing directory, for Loss.
func (s *state) rel(path string) string {
	r, err := filepath.Rel(s.root, path)
	if err != nil {
		return path
	}
	return r
}

// rename renames parent1/name1 to parent2/name2 as rename(2) does (flags:
// 0, RENAME_NOREPLACE or RENAME_EXCHANGE), journalling it. An entry it
// replaces moves to the trash first, and comes back if the rename is
// undone.
func (s *state) rename(parent1, name1, parent2, name2 string, flags uint32) error {
	src, dst := filepath.Join(parent1, name1), filepath.Join(parent2, name2)
	what := fmt.Sprintf("rename %s -> %s", s.rel(src), s.rel(dst))
	if flags&^(renameNoReplace|renameExchange) != 0 || flags == renameNoReplace|renameExchange {
		return syscall.EINVAL
	}
	var sst, dst0 syscall.Stat_t
	if err := syscall.Lstat(src, &sst); err != nil {
		return err
	}
	if flags&renameExchange != 0 {
		if err := renameat2(src, dst, renameExchange); err != nil {
			return err
		}
		return s.record("exchange "+s.rel(src)+" <-> "+s.rel(dst), func() error { return renameat2(src, dst, renameExchange) }, nil, parent1, parent2)
	}
	err := syscall.Lstat(dst, &dst0)
	switch {
	case errors.Is(err, syscall.ENOENT):
		if err := os.Rename(src, dst); err != nil {
			return err
		}
		return s.record(what, func() error { return os.Rename(dst, src) }, nil, parent1, parent2)
	case err != nil:
		return err
	case flags&renameNoReplace != 0:
		return syscall.EEXIST
	case dst0.Ino == sst.Ino:
		return nil // the same file: rename(2) does nothing
	}
	srcDir := sst.Mode&syscall.S_IFMT == syscall.S_IFDIR
	dstDir := dst0.Mode&syscall.S_IFMT == syscall.S_IFDIR
	switch {
	case srcDir && !dstDir:
		return syscall.ENOTDIR
	case !srcDir && dstDir:
		return syscall.EISDIR
	case dstDir:
		if err := mustBeEmpty(dst); err != nil {
			return err
		}
	}
	t, err := s.toTrash(dst)
	if err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		if rerr := os.Rename(t, dst); rerr != nil {
			panic(fmt.Sprintf("lazyfs: rename %s -> %s failed (%v) and the replaced entry cannot come back from %s: %v", src, dst, err, t, rerr))
		}
		return err
	}
	if err := s.record("replace "+s.rel(dst), func() error { return os.Rename(t, dst) }, func() error { return os.RemoveAll(t) }, parent2); err != nil {
		return err
	}
	return s.record(what, func() error { return os.Rename(dst, src) }, nil, parent1, parent2)
}

// commitDir commits the journal up to and including the last operation on
// an entry of the directory at path.
func (s *state) commitDir(path string) error {
	ino, err := dirIno(path)
	if err != nil {
		return err
	}
	last := -1
	for i, op := range s.journal {
		if slices.Contains(op.dirs, ino) {
			last = i
		}
	}
	for i := 0; i <= last; i++ {
		if c := s.journal[i].commit; c != nil {
			if err := c(); err != nil {
				s.journal = s.journal[i:]
				return err
			}
		}
	}
	s.journal = s.journal[last+1:]
	return nil
}

// Loss is what a power loss dropped.
type Loss struct {
	// Files is the number of files that had writes or truncations not
	// yet fsynced; Pages the 4 KiB pages of unsynced writes dropped.
	Files, Pages int
	// Undone are the directory operations undone, newest first.
	Undone []string
}

func (l Loss) String() string {
	return fmt.Sprintf("%d files with unsynced changes (%d pages), %d directory operations undone", l.Files, l.Pages, len(l.Undone))
}

// ErrPoweredOff reports a PowerLoss of a mount that already lost power.
var ErrPoweredOff = errors.New("lazyfs: the mount has already lost power (Remount it)")

// powerLoss drops every cache, undoes the uncommitted journal and makes
// every later operation fail with EIO.
func (s *state) powerLoss() (Loss, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return Loss{}, ErrPoweredOff
	}
	s.dead = true
	var loss Loss
	for _, f := range s.files {
		if f.dirty() {
			loss.Files++
			loss.Pages += len(f.pages)
		}
		f.fd.Close()
	}
	s.files = nil
	var errs []error
	for i := len(s.journal) - 1; i >= 0; i-- {
		op := s.journal[i]
		loss.Undone = append(loss.Undone, op.what)
		if err := op.undo(); err != nil {
			errs = append(errs, fmt.Errorf("undoing %s: %w", op.what, err))
		}
	}
	s.journal = nil
	if err := os.RemoveAll(s.trash); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return loss, fmt.Errorf("lazyfs: power loss: the backing directory may not be what was durable: %w", errors.Join(errs...))
	}
	return loss, nil
}
