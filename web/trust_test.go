package web_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dynworkflow/dynworkflow/web"
)

// impostor is a server on 127.0.0.1 that answers /api/health as the
// runtime of pid would, and counts the requests that carried a token.
type impostor struct {
	addr   string
	tokens atomic.Int64
}

func startImpostor(t *testing.T, pid int) *impostor {
	t.Helper()
	im := &impostor{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	im.addr = ln.Addr().String()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			im.tokens.Add(1)
		}
		fmt.Fprintf(w, `{"ok":true,"protocolVersion":%d,"pid":%d}`, web.ProtocolVersion, pid)
	})}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	return im
}

// descriptorAt writes a descriptor naming addr into a private directory.
func descriptorAt(t *testing.T, addr string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runtime.json")
	d := web.Descriptor{ProtocolVersion: web.ProtocolVersion, PID: 4242, Address: addr, URL: "http://" + addr, Token: testToken}
	if err := web.WriteDescriptor(path, d); err != nil {
		t.Fatal(err)
	}
	return path
}

// A descriptor whose runtime died is not trusted, whoever answers at its
// address: nothing, and no token, is sent there.
func TestConnectRefusesAStaleDescriptor(t *testing.T) {
	im := startImpostor(t, 4242)
	path := descriptorAt(t, im.addr)
	if _, _, err := web.Connect(context.Background(), path); !errors.Is(err, web.ErrStaleDescriptor) {
		t.Fatalf("Connect without a lock file = %v, want ErrStaleDescriptor", err)
	}
	own, err := web.ClaimOwnership(path)
	if err != nil {
		t.Fatal(err)
	}
	own.Release() // the owner died: the lock file stays, nobody holds it
	if _, _, err := web.Connect(context.Background(), path); !errors.Is(err, web.ErrStaleDescriptor) {
		t.Fatalf("Connect with a lock nobody holds = %v, want ErrStaleDescriptor", err)
	}
	if n := im.tokens.Load(); n != 0 {
		t.Errorf("the impostor received the token %d times", n)
	}
}

// With the lock held, a descriptor still names only loopback IPs, and a
// symlink is never followed.
func TestConnectRefusesBadAddressesAndLinks(t *testing.T) {
	for _, addr := range []string{"localhost:80", "example.com:80", "10.0.0.1:80", "[::]:80", "0.0.0.0:80"} {
		path := descriptorAt(t, addr)
		own, err := web.ClaimOwnership(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := web.Connect(context.Background(), path); !errors.Is(err, web.ErrUntrustedPeer) {
			t.Errorf("Connect to %s = %v, want ErrUntrustedPeer", addr, err)
		}
		own.Release()
	}
	im := startImpostor(t, 4242)
	real := descriptorAt(t, im.addr)
	link := filepath.Join(t.TempDir(), "runtime.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	own, err := web.ClaimOwnership(link)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Release()
	if _, _, err := web.Connect(context.Background(), link); err == nil {
		t.Error("Connect followed a symlinked descriptor")
	}
	if n := im.tokens.Load(); n != 0 {
		t.Errorf("the impostor received the token %d times", n)
	}
}

// A live owner of ours is trusted.
func TestConnectTrustsALiveOwner(t *testing.T) {
	im := startImpostor(t, 4242)
	path := descriptorAt(t, im.addr)
	own, err := web.ClaimOwnership(path)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Release()
	if _, _, err := web.Connect(context.Background(), path); err != nil {
		t.Fatalf("Connect to a live owner of ours = %v", err)
	}
	if im.tokens.Load() != 1 {
		t.Errorf("the health check carried the token %d times, want once", im.tokens.Load())
	}
}

// Another user who binds the port of a runtime of ours gets nothing: the
// CLI sees that the server end of its connection is theirs before it
// sends a byte. (The lock is held here, as by a live runtime of ours whose
// port was taken.)
func TestConnectRefusesAnotherUsersServer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a server as another user")
	}
	// The other user's server is this test binary, copied where that user
	// can run it; it counts the bytes it receives.
	dir, err := os.MkdirTemp("", "foreign-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "server")
	if err := copyFile(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), foreignServerEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatal("the other user's server did not start")
	}
	port := strings.TrimSpace(lines.Text())
	path := descriptorAt(t, "127.0.0.1:"+port)
	own, err := web.ClaimOwnership(path)
	if err != nil {
		t.Fatal(err)
	}
	defer own.Release()
	_, _, err = web.Connect(context.Background(), path)
	if !errors.Is(err, web.ErrUntrustedPeer) || !strings.Contains(err.Error(), "uid 65534") {
		t.Fatalf("Connect = %v, want ErrUntrustedPeer naming uid 65534", err)
	}
	got := make(chan string, 1)
	go func() {
		if lines.Scan() {
			got <- lines.Text()
		}
	}()
	select {
	case line := <-got:
		if line != "got 0" {
			t.Errorf("the other user's server received data: %s", line)
		}
	case <-time.After(5 * time.Second):
		t.Error("the other user's server saw no connection")
	}
}

const foreignServerEnv = "WEB_TEST_FOREIGN_SERVER"

// runForeignServerIfAsked is the other user's server: it listens on
// 127.0.0.1, prints its port, and then "got N" for each connection, N
// being the bytes it received.
func runForeignServerIfAsked() {
	if os.Getenv(foreignServerEnv) == "" {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(2)
	}
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(0)
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 65536)
		n, _ := c.Read(buf)
		fmt.Println("got", n)
		c.Close()
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}
