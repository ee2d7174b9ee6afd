//go:build amd64 && !purego

package hooked

// framePointers: callerFrames reads the frame pointers here.
const framePointers = true

// callerFrames fills rets with the return addresses of its caller's
// physical frame and of those above it (site_amd64.s).
//
//go:noescape
func callerFrames(rets *[siteFrames + 1]uintptr)
