package netproxy

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Dialler returns which of pids holds the other end of nc, a loopback
// TCP connection the proxy accepted, or 0 if none does (or the kernel's
// tables could not be read): a wing whose servers' own connections carry
// no name of their sender (Redis's cluster bus and replication) tells its
// nodes from its clients so.
func Dialler(nc net.Conn, pids []int) int {
	remote, rok := nc.RemoteAddr().(*net.TCPAddr)
	local, lok := nc.LocalAddr().(*net.TCPAddr)
	if !rok || !lok {
		return 0
	}
	return SocketOwner(remote.Port, local.Port, pids)
}

// SocketOwner returns which of pids holds the local end of the loopback
// TCP connection from port local to port remote, or 0: it finds the
// socket's inode in /proc/net/tcp, then a descriptor of it among each
// process's descriptors in /proc/<pid>/fd.
func SocketOwner(local, remote int, pids []int) int {
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0
	}
	inode := ""
	for _, line := range strings.Split(string(table), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 10 && hexPort(f[1]) == local && hexPort(f[2]) == remote {
			inode = f[9]
			break
		}
	}
	if inode == "" || inode == "0" {
		return 0
	}
	want := "socket:[" + inode + "]"
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(dir + "/" + fd.Name()); err == nil && l == want {
				return pid
			}
		}
	}
	return 0
}

// hexPort is the port of an address of /proc/net/tcp ("0100007F:9C40"),
// or −1.
func hexPort(addr string) int {
	_, port, ok := strings.Cut(addr, ":")
	if !ok {
		return -1
	}
	n, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return -1
	}
	return int(n)
}
