package devserver

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// ErrPortInUse is matched (errors.Is) by Start's error when a configured port
// cannot be bound; errors.As with a *PortError tells which one.
var ErrPortInUse = errors.New("port already in use")

// PortError reports a port Start could not bind, e.g.
// "FrontendPort 127.0.0.1:7233: port already in use: listen tcp ...".
type PortError struct {
	Field string // the Options field: "FrontendPort", "HTTPPort" or "UIPort"
	Addr  string // host:port
	Err   error  // from net.Listen
}

func (e *PortError) Error() string {
	return e.Field + " " + e.Addr + ": " + ErrPortInUse.Error() + ": " + e.Err.Error()
}

// Is makes errors.Is(err, ErrPortInUse) true.
func (e *PortError) Is(target error) bool { return target == ErrPortInUse }

func (e *PortError) Unwrap() error { return e.Err }

// checkPortFree reports whether ip:port can be bound right now.
func checkPortFree(field, ip string, port int) error {
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return &PortError{Field: field, Addr: addr, Err: err}
	}
	return l.Close()
}

// freePort returns a port on ip that the kernel considers free and keeps it
// from being handed out again as an ephemeral port for about a minute, so that
// the server can bind it a moment later.
//
// The port is taken from a listener on port 0. Before closing it, a connection
// is made to it and closed from the accepting side first: that side's socket
// stays in TIME_WAIT, which keeps the port out of the kernel's ephemeral port
// allocation (for both bind(0) and outgoing connections) while an explicit
// bind with SO_REUSEADDR, which Go sets on listeners, still succeeds.
func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return port, nil // still free; just without the TIME_WAIT guard
	}
	defer c.Close()
	if s, err := l.Accept(); err == nil {
		_ = s.Close() // accepting side closes first: TIME_WAIT on our port
	}
	return port, nil
}
