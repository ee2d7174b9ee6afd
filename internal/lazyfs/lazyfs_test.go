package lazyfs_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate/tollgate/internal/lazyfs"
)

// mount mounts a lazyfs of a new backing directory for t.
func mount(t *testing.T) *lazyfs.Mount {
	t.Helper()
	dir := t.TempDir()
	backing, mnt := filepath.Join(dir, "disk"), filepath.Join(dir, "mnt")
	for _, d := range []string{backing, mnt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return lazyfs.MountT(t, backing, mnt)
}

// powerLoss loses power and mounts again, as a reboot does.
func powerLoss(t *testing.T, m *lazyfs.Mount) lazyfs.Loss {
	t.Helper()
	loss, err := m.PowerLoss()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Remount(); err != nil {
		t.Fatal(err)
	}
	return loss
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// syncDir fsyncs the directory at path.
func syncDir(t *testing.T, path string) {
	t.Helper()
	d, err := os.Open(path)
	must(t, err)
	defer d.Close()
	must(t, d.Sync())
}

// write creates (or truncates) name in dir with data, fsyncing the file
// if syncFile and the directory if syncDirectory.
func write(t *testing.T, dir, name, data string, syncFile, syncDirectory bool) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	must(t, err)
	_, err = f.WriteString(data)
	must(t, err)
	if syncFile {
		must(t, f.Sync())
	}
	must(t, f.Close())
	if syncDirectory {
		syncDir(t, dir)
	}
}

func read(t *testing.T, path string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	must(t, err)
	return string(b), true
}

func wantFile(t *testing.T, path, want string) {
	t.Helper()
	got, ok := read(t, path)
	if !ok {
		t.Fatalf("%s: missing, want %q", filepath.Base(path), want)
	}
	if got != want {
		t.Fatalf("%s holds %q, want %q", filepath.Base(path), got, want)
	}
}

func wantMissing(t *testing.T, path string) {
	t.Helper()
	if got, ok := read(t, path); ok {
		t.Fatalf("%s exists (holding %q), want it gone", filepath.Base(path), got)
	}
}

func TestWriteWithoutFsyncIsLost(t *testing.T) {
	m := mount(t)
	write(t, m.Dir, "a", "", true, true) // the file itself is durable, empty
	f, err := os.OpenFile(filepath.Join(m.Dir, "a"), os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString("unsynced")
	must(t, err)
	must(t, f.Close()) // close persists nothing
	loss := powerLoss(t, m)
	wantFile(t, filepath.Join(m.Dir, "a"), "")
	if loss.Files != 1 || loss.Pages != 1 {
		t.Errorf("loss %v, want 1 file and 1 page", loss)
	}
	// The backing directory, the disk, never held the write.
	wantFile(t, filepath.Join(m.Backing, "a"), "")
}

func TestFsyncedWriteIsKept(t *testing.T) {
	m := mount(t)
	p := filepath.Join(m.Dir, "a")
	write(t, m.Dir, "a", "synced;", true, true)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	must(t, err)
	_, err = f.WriteString("appended;")
	must(t, err)
	must(t, f.Sync()) // fdatasync would do too
	_, err = f.WriteString("lost;")
	must(t, err)
	must(t, f.Close())
	powerLoss(t, m)
	wantFile(t, p, "synced;appended;")
}

func TestFdatasyncIsEnough(t *testing.T) {
	m := mount(t)
	p := filepath.Join(m.Dir, "a")
	write(t, m.Dir, "a", "", true, true)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteAt([]byte("kept"), 0)
	must(t, err)
	must(t, syscall.Fdatasync(int(f.Fd())))
	must(t, f.Close())
	powerLoss(t, m)
	wantFile(t, p, "kept")
}

func TestReadsSeeTheCache(t *testing.T) {
	m := mount(t)
	p := filepath.Join(m.Dir, "a")
	write(t, m.Dir, "a", "0123456789", true, true)
	w, err := os.OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	defer w.Close()
	// Overwrite the middle and extend past a page, with a hole.
	_, err = w.WriteAt([]byte("abc"), 3)
	must(t, err)
	_, err = w.WriteAt([]byte("end"), 5000)
	must(t, err)
	want := []byte("012abc6789")
	want = append(want, make([]byte, 5000-len(want))...)
	want = append(want, "end"...)
	// Through another descriptor, and a stat.
	got, err := os.ReadFile(p)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes %q…, want %d bytes %q…", len(got), got[:16], len(want), want[:16])
	}
	st, err := os.Stat(p)
	must(t, err)
	if st.Size() != int64(len(want)) {
		t.Fatalf("stat says %d bytes, want %d", st.Size(), len(want))
	}
	// A truncation below what the disk holds, then growth: zeros.
	must(t, w.Truncate(2))
	must(t, w.Truncate(6))
	got, err = os.ReadFile(p)
	must(t, err)
	if string(got) != "01\x00\x00\x00\x00" {
		t.Fatalf("after truncating to 2 and growing to 6: %q", got)
	}
	// The disk still holds the last fsynced content.
	wantFile(t, filepath.Join(m.Backing, "a"), "0123456789")
}

func TestUnsyncedTruncateIsLost(t *testing.T) {
	m := mount(t)
	p := filepath.Join(m.Dir, "a")
	write(t, m.Dir, "a", "0123456789", true, true)
	must(t, os.Truncate(p, 4))
	wantFile(t, p, "0123")
	must(t, os.Truncate(p, 6)) // grown again: zeros, not what the disk holds
	wantFile(t, p, "0123\x00\x00")
	powerLoss(t, m)
	wantFile(t, p, "0123456789")
	// fsynced, it stays.
	f, err := os.OpenFile(p, os.O_RDWR|os.O_TRUNC, 0)
	must(t, err)
	_, err = f.WriteString("xy")
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
	powerLoss(t, m)
	wantFile(t, p, "xy")
}

func TestCreateWithoutDirFsyncIsLost(t *testing.T) {
	m := mount(t)
	write(t, m.Dir, "a", "data", true, false) // file fsynced, directory not
	wantFile(t, filepath.Join(m.Dir, "a"), "data")
	loss := powerLoss(t, m)
	wantMissing(t, filepath.Join(m.Dir, "a"))
	if len(loss.Undone) != 1 || loss.Undone[0] != "create a" {
		t.Errorf("undone %q, want [create a]", loss.Undone)
	}
}

func TestRenameWithoutDirFsyncIsLost(t *testing.T) {
	m := mount(t)
	write(t, m.Dir, "final", "old", true, true)
	write(t, m.Dir, "tmp", "new", true, true)
	must(t, os.Rename(filepath.Join(m.Dir, "tmp"), filepath.Join(m.Dir, "final")))
	wantFile(t, filepath.Join(m.Dir, "final"), "new")
	wantMissing(t, filepath.Join(m.Dir, "tmp"))
	powerLoss(t, m)
	// The rename is undone: the file it replaced is back.
	wantFile(t, filepath.Join(m.Dir, "final"), "old")
	wantFile(t, filepath.Join(m.Dir, "tmp"), "new")
}

func TestRenameWithDirFsyncIsKept(t *testing.T) {
	m := mount(t)
	write(t, m.Dir, "final", "old", true, true)
	write(t, m.Dir, "tmp", "new", true, false)
	must(t, os.Rename(filepath.Join(m.Dir, "tmp"), filepath.Join(m.Dir, "final")))
	syncDir(t, m.Dir)
	powerLoss(t, m)
	wantFile(t, filepath.Join(m.Dir, "final"), "new")
	wantMissing(t, filepath.Join(m.Dir, "tmp"))
	// The replaced file is gone from the disk too, trash included.
	ents, err := os.ReadDir(m.Backing)
	must(t, err)
	trash, err := os.ReadDir(filepath.Join(m.Backing, lazyfs.TrashName))
	must(t, err)
	if len(ents) != 2 || len(trash) != 0 {
		t.Errorf("the backing directory holds %v, its trash %v: want final and an empty trash", ents, trash)
	}
}

func TestRenameAcrossDirectories(t *testing.T) {
	m := mount(t)
	a, b := filepath.Join(m.Dir, "a"), filepath.Join(m.Dir, "b")
	must(t, os.Mkdir(a, 0o755))
	must(t, os.Mkdir(b, 0o755))
	write(t, a, "f", "data", true, false)
	syncDir(t, a) // commits the mkdirs too: the journal is committed in order
	must(t, os.Rename(filepath.Join(a, "f"), filepath.Join(b, "f")))
	syncDir(t, a) // the rename changed a's entries too: committed
	powerLoss(t, m)
	wantMissing(t, filepath.Join(a, "f"))
	wantFile(t, filepath.Join(b, "f"), "data")
}

func TestUnlinkWithoutDirFsyncIsUndone(t *testing.T) {
	m := mount(t)
	p := filepath.Join(m.Dir, "a")
	write(t, m.Dir, "a", "data", true, true)
	// Open, unlink, keep using the descriptor: it still reads and writes.
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	must(t, os.Remove(p))
	wantMissing(t, p)
	_, err = f.WriteAt([]byte("DA"), 0)
	must(t, err)
	buf := make([]byte, 4)
	_, err = f.ReadAt(buf, 0)
	must(t, err)
	if string(buf) != "DAta" {
		t.Fatalf("the unlinked file reads %q, want \"DAta\"", buf)
	}
	must(t, f.Close())
	if ents, _ := os.ReadDir(m.Dir); len(ents) != 0 {
		t.Fatalf("the mount lists %v (the trash must not show)", ents)
	}
	powerLoss(t, m)
	wantFile(t, p, "data")
	// Unlinked and committed, it is gone.
	must(t, os.Remove(p))
	syncDir(t, m.Dir)
	powerLoss(t, m)
	wantMissing(t, p)
}

func TestMkdirAndRmdir(t *testing.T) {
	m := mount(t)
	d := filepath.Join(m.Dir, "d")
	must(t, os.Mkdir(d, 0o755))
	write(t, d, "f", "x", true, true) // commits mkdir d as well
	must(t, os.Remove(filepath.Join(d, "f")))
	must(t, os.Remove(d))
	powerLoss(t, m)
	wantFile(t, filepath.Join(d, "f"), "x")
	must(t, os.Mkdir(filepath.Join(m.Dir, "e"), 0o755))
	powerLoss(t, m)
	if _, err := os.Stat(filepath.Join(m.Dir, "e")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an unsynced mkdir survived: %v", err)
	}
}

func TestEveryOperationFailsAfterPowerLoss(t *testing.T) {
	m := mount(t)
	p := filepath.Join(m.Dir, "a")
	write(t, m.Dir, "a", "data", true, true)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	must(t, err)
	defer f.Close()
	if _, err := m.PowerLoss(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("late"), 0); !errors.Is(err, syscall.EIO) {
		t.Errorf("a write after the power loss: %v, want EIO", err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Errorf("an fsync after the power loss: %v, want EIO", err)
	}
	if _, err := os.Create(filepath.Join(m.Dir, "b")); !errors.Is(err, syscall.EIO) {
		t.Errorf("a create after the power loss: %v, want EIO", err)
	}
	if _, err := m.PowerLoss(); !errors.Is(err, lazyfs.ErrPoweredOff) {
		t.Errorf("a second PowerLoss: %v, want ErrPoweredOff", err)
	}
	f.Close()
	must(t, m.Remount())
	wantFile(t, p, "data")
}

func TestCleanUnmountKeepsEverything(t *testing.T) {
	m := mount(t)
	write(t, m.Dir, "a", "unsynced", false, false)
	must(t, m.Remount())
	wantFile(t, filepath.Join(m.Dir, "a"), "unsynced")
}

func TestControlFIFO(t *testing.T) {
	m := mount(t)
	write(t, m.Dir, "a", "unsynced", false, true)
	got := make(chan error, 1)
	path := filepath.Join(t.TempDir(), "ctl")
	stop, err := m.Control(path, func(l lazyfs.Loss, err error) {
		if err == nil && l.Files != 1 {
			err = errors.New("the loss counts " + l.String())
		}
		got <- err
	})
	must(t, err)
	defer stop()
	// A writer from outside, as a shell's echo power-loss > ctl.
	ctl, err := os.OpenFile(path, os.O_WRONLY, 0)
	must(t, err)
	_, err = ctl.WriteString("power-loss\n")
	must(t, err)
	must(t, ctl.Close())
	must(t, <-got)
	must(t, m.Remount())
	wantFile(t, filepath.Join(m.Dir, "a"), "")
	stop()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stop left the FIFO: %v", err)
	}
}

func TestHaltStopsEveryThread(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	must(t, cmd.Start())
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	must(t, lazyfs.Halt(cmd.Process.Pid, 5*time.Second))
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	must(t, err)
	s := string(b)
	if state := s[strings.LastIndexByte(s, ')')+2]; state != 'T' {
		t.Fatalf("after Halt the process is in state %c, want T (stopped)", state)
	}
}

func TestFsyncLies(t *testing.T) {
	m := mount(t)
	p := filepath.Join(m.Dir, "a")
	write(t, m.Dir, "a", "kept", true, true)
	m.SetFsyncLies(true)
	write(t, m.Dir, "a", "lost", true, true)
	write(t, m.Dir, "b", "lost", true, true)
	powerLoss(t, m)
	wantFile(t, p, "kept")
	wantMissing(t, filepath.Join(m.Dir, "b"))
	// Still lying after the remount; honest again once turned off.
	write(t, m.Dir, "a", "lost again", true, true)
	m.SetFsyncLies(false)
	write(t, m.Dir, "b", "kept", true, true)
	powerLoss(t, m)
	wantFile(t, p, "kept")
	wantFile(t, filepath.Join(m.Dir, "b"), "kept")
}

// mounted reports whether dir is a mount point now.
func mounted(t *testing.T, dir string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	must(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

func TestUnmountWhileBusyLeavesNothingBehind(t *testing.T) {
	t.Parallel() // it waits out Unmount's retries, the CPU idle
	m := mount(t)
	f, err := os.Create(filepath.Join(m.Dir, "a"))
	must(t, err)
	defer f.Close()
	if err := m.Unmount(); err == nil || !strings.Contains(err.Error(), "lazily") {
		t.Fatalf("Unmount with a file open: %v, want an error saying it detached the mount lazily", err)
	}
	if mounted(t, m.Dir) {
		t.Fatalf("%s is still mounted", m.Dir)
	}
}
