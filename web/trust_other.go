//go:build !linux

package web

import "net"

// trustPeer cannot tell who owns the other end of a TCP connection without
// Linux's /proc/net/tcp: the lock and loopback checks are all there is.
func trustPeer(net.Conn) error { return nil }
