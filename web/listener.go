package web

import (
	"bytes"
	"net"
	"sync"
)

// Go's HTTP server answers some requests itself, before any handler runs:
// a malformed request line or header (400), headers too large (431), an
// unsupported transfer encoding (501). Those answers are written straight
// to the connection, as one write, so no middleware can add headers to
// them. headerListener wraps each connection and adds the security headers
// to exactly those answers: a write that is a whole response Go made
// (text/plain, "Connection: close", and no Content-Security-Policy, which
// every response of ours has).
type headerListener struct {
	net.Listener
	headers []byte // "Name: value\r\n" lines
}

func newHeaderListener(ln net.Listener, headers [][2]string) net.Listener {
	var b bytes.Buffer
	for _, h := range headers {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	return &headerListener{Listener: ln, headers: b.Bytes()}
}

func (l *headerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &headerConn{Conn: c, headers: l.headers}, nil
}

type headerConn struct {
	net.Conn
	headers []byte
	mu      sync.Mutex
}

// goErrorHeaders is how every answer Go's server makes itself ends its
// header block.
var goErrorHeaders = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

func (c *headerConn) Write(p []byte) (int, error) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.")) {
		return c.Conn.Write(p)
	}
	end := bytes.Index(p, goErrorHeaders)
	if end < 0 || bytes.Contains(p[:end], []byte("Content-Security-Policy")) {
		return c.Conn.Write(p)
	}
	// Insert our headers after Go's, before the blank line.
	at := end + len(goErrorHeaders) - 2
	out := make([]byte, 0, len(p)+len(c.headers))
	out = append(out, p[:at]...)
	out = append(out, c.headers...)
	out = append(out, p[at:]...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
