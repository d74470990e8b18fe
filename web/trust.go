package web

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// A descriptor left by a runtime that died (SIGKILL, OOM, a reboot, a
// closed terminal) still names a loopback port, which anyone on the
// machine can bind next. Before the CLI sends a token, a request or a
// checkpoint answer to the address a descriptor names, three things that
// need no secret must hold:
//
//   - the descriptor is ours (a regular file of the user we run as, not a
//     symlink) and its owner still holds runtime.json.lock: the kernel drops
//     that flock when the owner dies, however it dies, and no other user can
//     open the lock file in our private state directory to take it;
//   - the address is a loopback IP literal, never a name to resolve;
//   - the process that accepted our connection runs as the same user as we
//     do (trustPeer: on Linux, the owner of the server's end of that very
//     connection, read from /proc/net/tcp).
//
// Only then does the CLI ask /api/health, with the token, whether the
// server is the pid the descriptor names.

// ErrStaleDescriptor is matched when runtime.json describes a runtime that
// is gone: nobody holds its lock.
var ErrStaleDescriptor = errors.New("runtime.json is stale: its runtime is gone")

// ErrUntrustedPeer is matched when the address of runtime.json is answered
// by a process we must not send the token to.
var ErrUntrustedPeer = errors.New("the runtime's address is not answered by a runtime of yours")

// checkOwnerLive reports whether the owner of the descriptor at path still
// holds its lock.
func checkOwnerLive(path string) error {
	f, err := os.OpenFile(path+".lock", os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s has no lock file", ErrStaleDescriptor, path)
	}
	if err != nil {
		return fmt.Errorf("probe the runtime's lock: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fsx.Ours(fi) {
		return fmt.Errorf("%w: %s.lock is not a file of yours", ErrUntrustedPeer, path)
	}
	busy, err := fsx.Flock(f, unix.LOCK_SH)
	if err != nil {
		return fmt.Errorf("probe the runtime's lock: %w", err)
	}
	if !busy {
		_ = fsx.Unflock(f)
		return fmt.Errorf("%w: nobody holds %s.lock", ErrStaleDescriptor, path)
	}
	return nil
}

// checkLoopbackAddr accepts an address whose host is a loopback IP.
func checkLoopbackAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: address %q: %w", ErrUntrustedPeer, addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%w: address %q is not a loopback IP address", ErrUntrustedPeer, addr)
	}
	return nil
}

// trustedDialer dials only loopback IPs, and keeps a connection only when
// its peer passes trustPeer: every connection a Client makes, not only the
// first, is checked before a byte of a request goes out on it.
func trustedDialer(ctx context.Context, network, addr string) (net.Conn, error) {
	if err := checkLoopbackAddr(addr); err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if err := trustPeer(conn); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}
