package web

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// trustPeer checks that the server end of conn belongs to the user we run
// as. SO_PEERCRED does not apply to TCP; but the kernel lists every TCP
// socket in /proc/net/tcp and tcp6 with its owner's uid, and the server's
// end of this connection is the one whose local address is our remote one
// and whose remote address is our local one. An accepted socket inherits
// the uid of the listener, that is of the process that bound the port.
func trustPeer(conn net.Conn) error {
	local, lok := conn.LocalAddr().(*net.TCPAddr)
	remote, rok := conn.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return fmt.Errorf("%w: not a TCP connection", ErrUntrustedPeer)
	}
	self := local.AddrPort()
	peer := remote.AddrPort()
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		uid, found, err := socketOwner(table, peer, self)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUntrustedPeer, err)
		}
		if !found {
			continue
		}
		if uid != os.Geteuid() {
			return fmt.Errorf("%w: %s is served by uid %d, not by you (uid %d); the runtime that wrote runtime.json is gone",
				ErrUntrustedPeer, remote, uid, os.Geteuid())
		}
		return nil
	}
	return fmt.Errorf("%w: the server end of %s -> %s is not in /proc/net/tcp", ErrUntrustedPeer, local, remote)
}

// socketOwner finds the socket with local address local and remote address
// remote in a /proc/net/tcp table and returns its uid.
func socketOwner(table string, local, remote netip.AddrPort) (uid int, found bool, err error) {
	f, err := os.Open(table)
	if os.IsNotExist(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		l, err1 := parseProcAddr(fields[1])
		r, err2 := parseProcAddr(fields[2])
		if err1 != nil || err2 != nil || !sameEndpoint(l, local) || !sameEndpoint(r, remote) {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		return uid, err == nil, err
	}
	return 0, false, sc.Err()
}

// sameEndpoint compares endpoints, an IPv4 address and its IPv6-mapped
// form being the same.
func sameEndpoint(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// parseProcAddr parses "0100007F:1F90": the address as the kernel prints
// it, each 32-bit word of the network-order bytes read as a native integer,
// and the port.
func parseProcAddr(s string) (netip.AddrPort, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	if len(hexIP) != 8 && len(hexIP) != 32 {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	raw := make([]byte, len(hexIP)/2)
	for i := 0; i < len(hexIP); i += 8 {
		word, err := strconv.ParseUint(hexIP[i:i+8], 16, 32)
		if err != nil {
			return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
		}
		binary.NativeEndian.PutUint32(raw[i/2:], uint32(word))
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port %q", s)
	}
	ip, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(ip, uint16(port)), nil
}
