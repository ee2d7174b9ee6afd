// Package clock is the default millisecond clock of both tables in impl/,
// kept in one place so that both count from the same instant.
package clock

import "time"

var start = time.Now()

// MonotonicMs counts milliseconds on the monotonic clock since the process
// loaded this package.
func MonotonicMs() int64 { return int64(time.Since(start) / time.Millisecond) }
