// Package tableopt is the configuration both tables of impl/ take: the
// millisecond clock and, for tollgate's own mutation checks, the injected
// faults. Each impl package keeps its own exported Option type and With…
// functions; this package is the one place their effect is defined.
package tableopt

import (
	"time"

	"github.com/tollgate/tollgate/internal/fault"
)

// Config is what a table's options set.
type Config struct {
	Clock  func() int64 // milliseconds; MonotonicMs by default
	Faults fault.Set    // empty for the real implementation
}

var start = time.Now()

// MonotonicMs counts milliseconds on the monotonic clock since the process
// loaded this package. Both tables share this base.
func MonotonicMs() int64 { return int64(time.Since(start) / time.Millisecond) }

// Build applies opts, in order, over the defaults.
func Build[O ~func(*Config)](opts []O) Config {
	cfg := Config{Clock: MonotonicMs}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}
