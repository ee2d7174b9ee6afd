//go:build !amd64 || purego

package hooked

// callerFrames leaves rets zero: here every site is asked of
// runtime.Callers (pcAbove).
func callerFrames(rets *[siteFrames + 1]uintptr) {}
