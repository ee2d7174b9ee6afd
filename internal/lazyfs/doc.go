// Package lazyfs is a FUSE file system that forgets, on command, every
// write that was not made durable, as a machine that loses power does: a
// test runs a server (redis-server, etcd) with its data directory on it,
// acknowledges writes, calls PowerLoss and restarts the server from what
// is left. A process kill (SIGKILL) is not such a test: the kernel's page
// cache outlives the process, so a write the server never fsynced is
// still read back, and an fsync policy is never what saved the data.
//
// The design follows Jepsen's lazyfs (a FUSE file system in C++ that keeps
// unsynced writes in a page cache of its own and drops it on a command
// written to a FIFO); this package is a separate Go implementation over
// github.com/hanwen/go-fuse/v2, with a model of directory entries that
// lazyfs does not have.
//
// # What is kept, and what a power loss drops
//
// A mount passes every operation through to a backing directory, which
// stands for the disk: what is in the backing directory is what survives a
// power loss. What has not reached it lives in the mount's memory:
//
//   - File data. A write goes to an in-memory cache of 4 KiB pages of its
//     file, and so does a truncation (ftruncate, O_TRUNC, fallocate that
//     extends the file). Reads, stat and mmap see the cache over the
//     backing file. fsync or fdatasync of any descriptor of the file
//     writes the file's cache to the backing file (truncation included);
//     nothing else does: not close, not a timer, not memory pressure. A
//     real kernel writes dirty pages back within some 30 seconds; here
//     they wait for an fsync, so a power loss drops every write since the
//     file's last fsync, the most a kernel is allowed to drop.
//
//   - Directory entries. create, mkdir, symlink, unlink, rmdir and rename
//     change the backing directory at once (so that there is somewhere
//     for a file's data to go when it is fsynced) and are appended to an
//     undo journal. fsync of a directory commits the journal up to and
//     including the last operation that changed an entry of that
//     directory, and every operation before it, in order: the journal is
//     one ordered log, committed as a prefix, as a journalling file system
//     (ext4 with data=ordered) commits its running transaction. A power
//     loss undoes the uncommitted suffix in reverse order: a file created
//     since is removed (whatever was fsynced into it), an unlinked file
//     comes back, a rename is reversed and the file it replaced returns.
//     So the rename-then-fsync-the-directory idiom is what makes a
//     rename durable, and fsync of a file alone does not make its own
//     directory entry durable (stricter than ext4, where an fsync commits
//     the whole running transaction, and as strict as POSIX).
//     Unlinked and replaced files wait in a hidden directory,
//     .lazyfs-trash at the top of the backing directory, until the
//     operation is committed or undone; the mount does not show it.
//
//   - Not modelled: permissions, owners and times (chmod, chown, utimes
//     reach the backing file at once and survive any power loss), hard
//     links and device nodes (refused: EPERM), extended attributes (not
//     supported), torn writes (a power loss drops a whole unsynced write,
//     never part of one) and reordering of writes within a file.
//
// # A power loss
//
// Mount.PowerLoss drops every file's cache and undoes the uncommitted
// journal, and from then on the mount answers every operation with EIO,
// as a disk that lost power does: a server that is still running sees its
// next write or fsync fail, and no later write can reach the backing
// directory. The caller then kills the server (SIGKILL), unmounts, mounts
// the backing directory again (Remount) and starts the server: it finds
// exactly what had been made durable. PowerLoss returns what it dropped
// (Loss).
//
// A test can also trigger a power loss from outside the process that
// holds the mount: Control serves a FIFO on which the line "power-loss"
// (echo power-loss > FIFO) does what PowerLoss does.
//
// Halt stops a server's every thread before the power loss, so that the
// loss is one instant: nothing the server acknowledges comes after it.
// SetFsyncLies makes fsync answer success and persist nothing (a disk
// that ignores flushes): the negative control of a power-loss check.
//
// # Requirements
//
// Linux, /dev/fuse and fusermount3 (Debian: Install). Available says
// whether this machine can mount; MountT is Mount for a test, which skips
// the test with the install command when it cannot, or fails it under
// CI=true.
package lazyfs
