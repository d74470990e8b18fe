package web

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// LoopbackHostConfig configures LoopbackHost.
type LoopbackHostConfig struct {
	// Skipper, if set, exempts requests.
	Skipper func(echo.Context) bool
}

// LoopbackHost refuses requests whose Host header does not name a loopback
// address. A page on evil.example can point its own name at 127.0.0.1 (DNS
// rebinding) and then talk to us as same-origin; its requests still carry
// Host: evil.example, which is how we tell.
func LoopbackHost(cfg LoopbackHostConfig) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if cfg.Skipper != nil && cfg.Skipper(c) {
				return next(c)
			}
			if !IsLoopbackHost(hostOnly(c.Request().Host)) {
				return newAPIError(http.StatusForbidden, codeForbidden,
					"host %q is not a loopback address; the runtime answers only on 127.0.0.1, [::1] or localhost", c.Request().Host)
			}
			return next(c)
		}
	}
}

// IsLoopbackHost reports whether host (no port) is localhost or a loopback
// IP literal.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips the port of a Host header or an address.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// ListenLoopback listens on TCP host:port, host being a loopback IP or
// localhost, and checks the address it bound. No name is ever resolved:
// localhost (with or without its trailing dot) is 127.0.0.1, since a
// resolver could answer anything for it, 0.0.0.0 included. Whatever the
// host, a listener bound to an address that is not loopback is closed.
func ListenLoopback(host string, port int) (net.Listener, error) {
	if strings.TrimSuffix(strings.ToLower(host), ".") == "localhost" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%s is not a loopback address: the runtime serves 127.0.0.1, ::1 or localhost only", host)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, fmt.Errorf("listening on %s bound %s, which is not a loopback address", host, ln.Addr())
	}
	return ln, nil
}
