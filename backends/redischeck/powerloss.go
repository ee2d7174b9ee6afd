package redischeck

import (
	"fmt"

	"github.com/tollgate/tollgate/backends/redisserver"
)

// The power-loss scenarios: the server's data directory on a lazyfs mount
// (internal/lazyfs), and at 30% of the calls a crash of the machine: every
// write Redis had not fsynced is dropped, the process is killed and
// restarted from what was durable (redisserver.PowerLoss). One row per
// appendfsync policy, each holding the policy to what it promises:
//
//   - always: Redis fsyncs the AOF before it replies, so no acknowledged
//     write may be lost (the row fails on a loss, as the crash row does);
//   - everysec: a background fsync once a second, so the writes since the
//     last one are lost: the row fails if nothing acknowledged was lost,
//     which would mean the power loss did not reach the fsync;
//   - no: Redis never fsyncs the AOF, so every write since the AOF file
//     was made is lost: the row fails if nothing was.
//
// A process kill (the crash row) cannot tell these apart: the kernel
// keeps what the process wrote, and all three keep every write.
func powerLossScenarios() []Scenario {
	var out []Scenario
	for _, p := range []struct {
		policy, what string
		mustLose     bool
	}{
		{"always", "every acknowledged write was fsynced: none may be lost", false},
		{"everysec", "the writes since the last background fsync (up to a second) must be lost", true},
		{"no", "Redis never fsyncs: every write since the AOF was made must be lost", true},
	} {
		out = append(out, Scenario{
			Name:     "power-loss-" + p.policy,
			What:     fmt.Sprintf("appendfsync %s on a lazyfs data directory; at 30%% of the calls a power loss (unsynced writes dropped, kill -9, restart from the AOF): %s", p.policy, p.what),
			AOF:      true,
			Fsync:    p.policy,
			OnLazyFS: true,
			MustLose: p.mustLose,
			// What a power loss under everysec or no keeps is not the
			// whole state: the credit table finds it gone and refuses.
			StateLost: p.mustLose,
			inject:    powerLoss,
		})
	}
	return out
}

func powerLoss(e *env) error {
	if !e.Strike(0.3) {
		return nil
	}
	loss, err := e.primary.PowerLoss()
	if err != nil {
		return err
	}
	e.Note = "the power loss dropped " + loss.String()
	return nil
}

// serverOptions are the options of s's server (not a cluster's).
func (s Scenario) serverOptions() []redisserver.Option {
	var opts []redisserver.Option
	switch {
	case s.Fsync != "":
		opts = append(opts, redisserver.WithAppendFsync(s.Fsync))
	case s.AOF:
		opts = append(opts, redisserver.WithAOF())
	}
	if s.OnLazyFS {
		opts = append(opts, redisserver.OnLazyFS())
	}
	if s.Clock != 0 {
		opts = append(opts, redisserver.WithSteppableClock())
	}
	if s.MinReplicas && !s.unsetMinReplicas {
		opts = append(opts, redisserver.WithMinReplicas(1, PartitionLag))
	}
	return opts
}
