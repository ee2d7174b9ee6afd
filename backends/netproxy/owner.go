package netproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"strconv"
)

// Diallers returns, for each of ncs (loopback TCP connections a proxy
// accepted), which of pids holds its other end, or 0 if none does (or the
// kernel's tables could not be read): a wing whose servers' own
// connections carry no name of their sender (Redis's cluster bus and
// replication) tells its nodes from its clients so. It reads the kernel's
// tables once for all of ncs: it finds each
// socket's inode in /proc/net/tcp, then a descriptor of it among each
// process's descriptors in /proc/<pid>/fd. Reading /proc/net/tcp walks
// the kernel's whole table of TCP sockets (some 10 ms of system time with
// a few thousand on the machine), so a proxy that must name many
// connections at once names them together.
func Diallers(ncs []net.Conn, pids []int) []int {
	out := make([]int, len(ncs))
	want := map[[2]int]int{} // (dialler's port, proxy's port) → index in ncs
	for k, nc := range ncs {
		remote, rok := nc.RemoteAddr().(*net.TCPAddr)
		local, lok := nc.LocalAddr().(*net.TCPAddr)
		if rok && lok {
			want[[2]int{remote.Port, local.Port}] = k
		}
	}
	if len(want) == 0 {
		return out
	}
	inodes := socketInodes(want) // "socket:[inode]" → index in ncs
	if len(inodes) == 0 {
		return out
	}
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			l, err := os.Readlink(dir + "/" + fd.Name())
			if err != nil {
				continue
			}
			if k, ok := inodes[l]; ok && out[k] == 0 {
				out[k] = pid
			}
		}
	}
	return out
}

// socketInodes reads /proc/net/tcp once and returns, for each wanted
// (local port, remote port) pair found, its socket's link name
// ("socket:[inode]") mapped to the pair's value.
func socketInodes(want map[[2]int]int) map[string]int {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() && len(out) < len(want) {
		fields := bytes.Fields(sc.Bytes())
		if len(fields) < 10 {
			continue
		}
		k, ok := want[[2]int{hexPort(fields[1]), hexPort(fields[2])}]
		if ok && string(fields[9]) != "0" {
			out["socket:["+string(fields[9])+"]"] = k
		}
	}
	return out
}

// hexPort is the port of an address of /proc/net/tcp ("0100007F:9C40"),
// or −1.
func hexPort(addr []byte) int {
	i := bytes.IndexByte(addr, ':')
	if i < 0 {
		return -1
	}
	n, err := strconv.ParseUint(string(addr[i+1:]), 16, 16)
	if err != nil {
		return -1
	}
	return int(n)
}
