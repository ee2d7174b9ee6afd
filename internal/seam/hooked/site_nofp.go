//go:build !amd64 || purego

package hooked

// framePointers: callerFrames reads no frame pointers here.
const framePointers = false

// callerFrames leaves rets zero: here every site is asked of
// runtime.Callers (pcAbove).
func callerFrames(rets *[siteFrames + 1]uintptr) {}
