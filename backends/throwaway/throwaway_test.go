package throwaway

import (
	"fmt"
	"net"
	"testing"
)

// TestFreePortOutsideEphemeralRange: the ports FreePort hands out lie
// outside the kernel's range for outgoing connections, so no connect()
// can take one before the server binds it, and each can be listened on.
func TestFreePortOutsideEphemeralRange(t *testing.T) {
	lo, hi, ok := ephemeralRange()
	if !ok {
		t.Skip("no /proc/sys/net/ipv4/ip_local_port_range here (not Linux): FreePort lets the kernel pick")
	}
	if lo-firstPort < 1000 && 65535-hi < 1000 {
		t.Skipf("the ephemeral range %d-%d leaves no room outside it: FreePort lets the kernel pick", lo, hi)
	}
	seen := map[int]bool{}
	for range 50 {
		p, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if p >= lo && p <= hi {
			t.Fatalf("FreePort returned %d, inside the ephemeral range %d-%d", p, lo, hi)
		}
		if p < firstPort {
			t.Fatalf("FreePort returned %d, below %d", p, firstPort)
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d from FreePort: %v", p, err)
		}
		l.Close()
		seen[p] = true
	}
	if len(seen) < 40 {
		t.Fatalf("50 calls of FreePort gave %d distinct ports, want them drawn at random", len(seen))
	}
}
