package auto

import "golang.org/x/sys/unix"

// noCore sets the core-file limit of process pid to 0. It is called as
// soon as the process has started; a test binary that aborts before that
// (none of the layers' does: they abort only when runDump quits them)
// would keep the limit it inherited.
func noCore(pid int) {
	_ = unix.Prlimit(pid, unix.RLIMIT_CORE, &unix.Rlimit{}, nil)
}
