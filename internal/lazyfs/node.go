package lazyfs

import (
	"context"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

const (
	renameNoReplace = unix.RENAME_NOREPLACE
	renameExchange  = unix.RENAME_EXCHANGE
)

func renameat2(src, dst string, flags uint32) error {
	return unix.Renameat2(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, uint(flags))
}

// node is one file, directory or symlink of the mount. It holds no state
// of its own: its backing path is its place in go-fuse's tree of inodes,
// and a regular file's cache is in state.files by backing inode number
// (the kernel may forget a node while its file still has unsynced writes).
type node struct {
	fs.Inode
	s *state
}

// handle is an open descriptor of a regular file.
type handle struct{ f *file }

var (
	_ fs.NodeLookuper   = (*node)(nil)
	_ fs.NodeGetattrer  = (*node)(nil)
	_ fs.NodeSetattrer  = (*node)(nil)
	_ fs.NodeOpener     = (*node)(nil)
	_ fs.NodeCreater    = (*node)(nil)
	_ fs.NodeReader     = (*node)(nil)
	_ fs.NodeWriter     = (*node)(nil)
	_ fs.NodeFsyncer    = (*node)(nil)
	_ fs.NodeFlusher    = (*node)(nil)
	_ fs.NodeReleaser   = (*node)(nil)
	_ fs.NodeAllocater  = (*node)(nil)
	_ fs.NodeReaddirer  = (*node)(nil)
	_ fs.NodeMkdirer    = (*node)(nil)
	_ fs.NodeUnlinker   = (*node)(nil)
	_ fs.NodeRmdirer    = (*node)(nil)
	_ fs.NodeRenamer    = (*node)(nil)
	_ fs.NodeSymlinker  = (*node)(nil)
	_ fs.NodeReadlinker = (*node)(nil)
	_ fs.NodeLinker     = (*node)(nil)
	_ fs.NodeMknoder    = (*node)(nil)
	_ fs.NodeStatfser   = (*node)(nil)
)

// path is n's backing path; false for a node in no directory (an unlinked
// file, which is reached through its descriptor only).
func (n *node) path() (string, bool) {
	if !n.IsRoot() {
		if _, parent := n.Parent(); parent == nil {
			return "", false
		}
	}
	return filepath.Join(n.s.root, n.Path(nil)), true
}

// lock takes the state's lock and reports EIO after a power loss; on 0 the
// caller must unlock.
func (n *node) lock() syscall.Errno {
	n.s.mu.Lock()
	if n.s.dead {
		n.s.mu.Unlock()
		return errDead
	}
	return 0
}

func (n *node) unlock() { n.s.mu.Unlock() }

func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	return fs.ToErrno(err)
}

// fill sets out from the backing file at path (lstat) and returns the
// identity of a node for it, with the size a reader sees if the mount
// caches the file.
func (n *node) fill(path string, out *fuse.Attr) (fs.StableAttr, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return fs.StableAttr{}, err
	}
	out.FromStat(&st)
	if f, ok := n.s.files[st.Ino]; ok {
		out.Size = uint64(f.size)
		out.Blocks = (out.Size + 511) / 512
	}
	// The generation tells a new file from an old one whose inode number
	// the backing file system reused.
	gen := uint64(1)
	var sx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &sx) == nil && sx.Mask&unix.STATX_BTIME != 0 {
		gen = uint64(sx.Btime.Sec)*1e9 + uint64(sx.Btime.Nsec)
	}
	return fs.StableAttr{Mode: st.Mode & syscall.S_IFMT, Ino: st.Ino, Gen: gen}, nil
}

// child makes the node for name in n, at path.
func (n *node) child(ctx context.Context, path string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	id, err := n.fill(path, &out.Attr)
	if err != nil {
		return nil, errno(err)
	}
	return n.NewInode(ctx, &node{s: n.s}, id), 0
}

// hidden reports whether name in n is the trash, which the mount hides.
func (n *node) hidden(name string) bool { return n.IsRoot() && name == TrashName }

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if e := n.lock(); e != 0 {
		return nil, e
	}
	defer n.unlock()
	p, ok := n.path()
	if !ok || n.hidden(name) {
		return nil, syscall.ENOENT
	}
	return n.child(ctx, filepath.Join(p, name), out)
}

func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if e := n.lock(); e != 0 {
		return e
	}
	defer n.unlock()
	if h, ok := fh.(*handle); ok {
		return n.fstat(h.f, &out.Attr)
	}
	if f, ok := n.s.files[n.StableAttr().Ino]; ok && n.StableAttr().Mode == syscall.S_IFREG {
		return n.fstat(f, &out.Attr)
	}
	p, ok := n.path()
	if !ok {
		return syscall.ENOENT
	}
	_, err := n.fill(p, &out.Attr)
	return errno(err)
}

// fstat sets out from f's backing file, with the size a reader sees.
func (n *node) fstat(f *file, out *fuse.Attr) syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.fd.Fd()), &st); err != nil {
		return errno(err)
	}
	out.FromStat(&st)
	out.Size = uint64(f.size)
	out.Blocks = (out.Size + 511) / 512
	return 0
}

// fileOf is the cache of n's file: the descriptor's, or one opened by path.
func (n *node) fileOf(fh fs.FileHandle) (*file, syscall.Errno) {
	if h, ok := fh.(*handle); ok {
		return h.f, 0
	}
	if f, ok := n.s.files[n.StableAttr().Ino]; ok {
		return f, 0
	}
	p, ok := n.path()
	if !ok {
		return nil, syscall.ENOENT
	}
	f, err := n.s.openFile(p)
	return f, errno(err)
}

func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if e := n.lock(); e != 0 {
		return e
	}
	defer n.unlock()
	var f *file
	if n.StableAttr().Mode == syscall.S_IFREG {
		var e syscall.Errno
		if f, e = n.fileOf(fh); e != 0 {
			return e
		}
		defer n.s.release(f)
	}
	// Size: into the cache. Mode, owner and times: to the backing entry
	// at once (not modelled).
	if sz, ok := in.GetSize(); ok {
		if f == nil {
			return syscall.EISDIR
		}
		f.truncate(int64(sz))
	}
	target := ""
	if f != nil {
		target = "/proc/self/fd/" + itoa(int(f.fd.Fd()))
	} else {
		p, ok := n.path()
		if !ok {
			return syscall.ENOENT
		}
		target = p
	}
	if m, ok := in.GetMode(); ok {
		if err := syscall.Chmod(target, m&07777); err != nil {
			return errno(err)
		}
	}
	uid, uok := in.GetUID()
	gid, gok := in.GetGID()
	if uok || gok {
		su, sg := -1, -1
		if uok {
			su = int(uid)
		}
		if gok {
			sg = int(gid)
		}
		if err := unix.Fchownat(unix.AT_FDCWD, target, su, sg, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return errno(err)
		}
	}
	mt, mok := in.GetMTime()
	at, aok := in.GetATime()
	if mok || aok {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		if aok {
			ts[0] = unix.NsecToTimespec(at.UnixNano())
		}
		if mok {
			ts[1] = unix.NsecToTimespec(mt.UnixNano())
		}
		flag := 0
		if f == nil {
			flag = unix.AT_SYMLINK_NOFOLLOW
		}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, target, ts, flag); err != nil {
			return errno(err)
		}
	}
	if f != nil {
		return n.fstat(f, &out.Attr)
	}
	_, err := n.fill(target, &out.Attr)
	return errno(err)
}

func itoa(i int) string {
	var b [20]byte
	p := len(b)
	for {
		p--
		b[p] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(b[p:])
		}
	}
}

// open makes a descriptor of f, applying O_TRUNC to the cache.
func open(f *file, flags uint32) *handle {
	if flags&syscall.O_TRUNC != 0 && flags&syscall.O_ACCMODE != syscall.O_RDONLY {
		f.truncate(0)
	}
	f.handles++
	return &handle{f: f}
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if e := n.lock(); e != 0 {
		return nil, 0, e
	}
	defer n.unlock()
	f, e := n.fileOf(nil)
	if e != 0 {
		return nil, 0, e
	}
	return open(f, flags), 0, 0
}

func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if e := n.lock(); e != 0 {
		return nil, nil, 0, e
	}
	defer n.unlock()
	dir, ok := n.path()
	if !ok {
		return nil, nil, 0, syscall.ENOENT
	}
	if n.hidden(name) {
		return nil, nil, 0, syscall.EPERM
	}
	p := filepath.Join(dir, name)
	fd, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, os.FileMode(mode&0o777))
	created := err == nil
	if os.IsExist(err) && flags&syscall.O_EXCL == 0 {
		fd, err = os.OpenFile(p, os.O_RDWR, 0)
	}
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	if created {
		if err := n.s.record("create "+n.s.rel(p), func() error { return os.Remove(p) }, nil, dir); err != nil {
			fd.Close()
			return nil, nil, 0, errno(err)
		}
	}
	f, err := n.s.adopt(fd)
	if err != nil {
		return nil, nil, 0, errno(err)
	}
	ch, e := n.child(ctx, p, out)
	if e != 0 {
		n.s.release(f)
		return nil, nil, 0, e
	}
	return ch, open(f, flags), 0, 0
}

func (n *node) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if e := n.lock(); e != 0 {
		return nil, e
	}
	defer n.unlock()
	f, e := n.fileOf(fh)
	if e != 0 {
		return nil, e
	}
	defer n.s.release(f)
	k, err := f.readAt(dest, off)
	if err != nil {
		return nil, errno(err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

func (n *node) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if e := n.lock(); e != 0 {
		return 0, e
	}
	defer n.unlock()
	f, e := n.fileOf(fh)
	if e != 0 {
		return 0, e
	}
	if err := f.writeAt(data, off); err != nil {
		return 0, errno(err)
	}
	return uint32(len(data)), 0
}

// Fsync of a file writes its cache to the backing file; of a directory,
// commits the journal through the last operation on its entries.
func (n *node) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	if e := n.lock(); e != 0 {
		return e
	}
	defer n.unlock()
	if n.s.lies {
		return 0
	}
	if n.StableAttr().Mode == syscall.S_IFDIR {
		p, ok := n.path()
		if !ok {
			return syscall.ENOENT
		}
		return errno(n.s.commitDir(p))
	}
	f, e := n.fileOf(fh)
	if e != 0 {
		return e
	}
	defer n.s.release(f)
	return errno(f.sync())
}

// Flush (a close) persists nothing.
func (n *node) Flush(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	if e := n.lock(); e != 0 {
		return e
	}
	n.unlock()
	return 0
}

func (n *node) Release(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	n.s.mu.Lock()
	defer n.s.mu.Unlock()
	h, ok := fh.(*handle)
	if !ok || n.s.dead {
		return 0
	}
	h.f.handles--
	n.s.release(h.f)
	return 0
}

// Allocate supports mode 0 (allocate, extending the file: etcd
// preallocates its WAL so) and FALLOC_FL_KEEP_SIZE (nothing to do: the
// cache has no blocks to reserve).
func (n *node) Allocate(ctx context.Context, fh fs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	if e := n.lock(); e != 0 {
		return e
	}
	defer n.unlock()
	f, e := n.fileOf(fh)
	if e != 0 {
		return e
	}
	defer n.s.release(f)
	switch mode {
	case 0:
		if end := int64(off + size); end > f.size {
			f.truncate(end)
		}
		return 0
	case unix.FALLOC_FL_KEEP_SIZE:
		return 0
	}
	return syscall.EOPNOTSUPP
}

func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	if e := n.lock(); e != 0 {
		return nil, e
	}
	defer n.unlock()
	p, ok := n.path()
	if !ok {
		return nil, syscall.ENOENT
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil, errno(err)
	}
	var list []fuse.DirEntry
	for _, e := range ents {
		if n.hidden(e.Name()) {
			continue
		}
		var st syscall.Stat_t
		if syscall.Lstat(filepath.Join(p, e.Name()), &st) != nil {
			continue
		}
		list = append(list, fuse.DirEntry{Name: e.Name(), Mode: st.Mode, Ino: st.Ino})
	}
	return fs.NewListDirStream(list), 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if e := n.lock(); e != 0 {
		return nil, e
	}
	defer n.unlock()
	dir, ok := n.path()
	if !ok {
		return nil, syscall.ENOENT
	}
	if n.hidden(name) {
		return nil, syscall.EPERM
	}
	p := filepath.Join(dir, name)
	if err := os.Mkdir(p, os.FileMode(mode&0o777)); err != nil {
		return nil, errno(err)
	}
	if err := n.s.record("mkdir "+n.s.rel(p), func() error { return os.Remove(p) }, nil, dir); err != nil {
		return nil, errno(err)
	}
	return n.child(ctx, p, out)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if e := n.lock(); e != 0 {
		return nil, e
	}
	defer n.unlock()
	dir, ok := n.path()
	if !ok {
		return nil, syscall.ENOENT
	}
	if n.hidden(name) {
		return nil, syscall.EPERM
	}
	p := filepath.Join(dir, name)
	if err := os.Symlink(target, p); err != nil {
		return nil, errno(err)
	}
	if err := n.s.record("symlink "+n.s.rel(p), func() error { return os.Remove(p) }, nil, dir); err != nil {
		return nil, errno(err)
	}
	return n.child(ctx, p, out)
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	if e := n.lock(); e != 0 {
		return nil, e
	}
	defer n.unlock()
	p, ok := n.path()
	if !ok {
		return nil, syscall.ENOENT
	}
	t, err := os.Readlink(p)
	return []byte(t), errno(err)
}

// Link is refused: hard links are not modelled.
func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EPERM
}

// Mknod is refused: device nodes and FIFOs are not modelled.
func (n *node) Mknod(ctx context.Context, name string, mode, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EPERM
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, false)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(name, true)
}

func (n *node) remove(name string, dir bool) syscall.Errno {
	if e := n.lock(); e != 0 {
		return e
	}
	defer n.unlock()
	p, ok := n.path()
	if !ok || n.hidden(name) {
		return syscall.ENOENT
	}
	return errno(n.s.remove(p, name, dir))
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if e := n.lock(); e != 0 {
		return e
	}
	defer n.unlock()
	np, ok := newParent.(*node)
	if !ok || np.s != n.s {
		return syscall.EXDEV
	}
	p1, ok1 := n.path()
	p2, ok2 := np.path()
	if !ok1 || !ok2 || n.hidden(name) {
		return syscall.ENOENT
	}
	if np.hidden(newName) {
		return syscall.EPERM
	}
	return errno(n.s.rename(p1, name, p2, newName, flags))
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	var st syscall.Statfs_t
	if err := syscall.Statfs(n.s.root, &st); err != nil {
		return errno(err)
	}
	out.FromStatfsT(&st)
	return 0
}
