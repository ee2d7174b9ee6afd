// Package tickets is in directory ticket: its name is not its path's last
// element.
package tickets

import "sync/atomic"

var last atomic.Uint64

// Next returns the next ticket.
func Next() uint64 { return last.Add(1) }
