//go:build unix

package build

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on the file at path (created when
// missing), waiting for it, and returns the func that releases it.
func lockFile(path string) (unlock func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, true, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, true, err
	}
	return func() { f.Close() }, true, nil
}
