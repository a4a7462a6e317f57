package devserver

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	enumspb "go.temporal.io/api/enums/v1"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Defaults applied by Start to zero-valued Options fields.
const (
	DefaultDataDir        = "loopguard-data"
	DefaultIP             = "127.0.0.1"
	DefaultFrontendPort   = 7233
	DefaultUIPort         = 8233
	DefaultNamespace      = "default"
	DefaultServerLogLevel = "warn"
	DefaultStartTimeout   = 30 * time.Second

	// DatabaseFile is the name of the SQLite file inside DataDir.
	DatabaseFile = "temporal.db"

	// NamespaceRetention is the retention period of a namespace created by
	// Start. An existing namespace keeps its own.
	NamespaceRetention = 24 * time.Hour
)

// Options configures Start. The zero value is valid: a file-backed server in
// ./loopguard-data with the frontend on 127.0.0.1:7233, the Web UI on
// http://127.0.0.1:8233 and the namespace "default".
type Options struct {
	// DataDir is the directory that holds the SQLite database (file
	// "temporal.db"), so workflows survive a restart of the process. It is
	// created if missing. Two servers cannot share one DataDir at a time: the
	// second Start fails. Default "loopguard-data", relative to the working
	// directory. Must be empty when Ephemeral is set.
	DataDir string

	// Ephemeral keeps everything in an in-memory SQLite database that is lost
	// on Stop. Default false.
	Ephemeral bool

	// IP is the address every listener binds to: frontend, UI and the
	// server's internal services. It must be a loopback address (the server
	// has neither TLS nor authentication); "localhost" means 127.0.0.1.
	// Default "127.0.0.1".
	IP string

	// FrontendPort is the gRPC port of the frontend, the address clients and
	// workers dial. Default 7233, or a free port when FreePorts is set.
	FrontendPort int

	// HTTPPort is the port of the frontend's HTTP API
	// (https://docs.temporal.io/references/http-api), which also serves
	// Nexus requests. Neither the SDK nor the Web UI needs it. Default: a free
	// port, whatever FreePorts says; read it back with Server.HTTPHostPort.
	HTTPPort int

	// UIPort is the HTTP port of the Web UI. Default 8233, or a free port when
	// FreePorts is set. Ignored when UIDisabled is set.
	UIPort int

	// UIDisabled turns off the Web UI. Default false.
	UIDisabled bool

	// FreePorts makes Start pick free ports for FrontendPort and UIPort when
	// they are left at zero, instead of 7233 and 8233. Meant for tests and
	// for running several servers side by side; read the chosen ports back
	// with Server.FrontendHostPort and Server.UIURL. Default false.
	FreePorts bool

	// Namespace is created if missing (retention NamespaceRetention) and is
	// the default namespace of clients made by Server.NewClient.
	// Default "default".
	Namespace string

	// SearchAttributes are custom search attributes registered on Namespace
	// at every start, e.g. {"LoopGuardState": INDEXED_VALUE_TYPE_KEYWORD}.
	// Registration is idempotent; an attribute that already exists with a
	// different type is an error. SQLite visibility offers a limited number
	// of slots per type (for example 10 Keyword attributes). Default none.
	SearchAttributes map[string]enumspb.IndexedValueType

	// Logger receives this package's messages and the server's own log lines
	// at ServerLogLevel or above. Default: a no-op logger.
	Logger *zap.Logger

	// ServerLogLevel filters the Temporal server's log lines passed to
	// Logger: "debug", "info", "warn", "error", or "off". The server is very
	// noisy at info. Default "warn".
	ServerLogLevel string

	// StartTimeout bounds how long Start waits for the frontend and the UI to
	// answer, in addition to the deadline of Start's context.
	// Default 30s.
	StartTimeout time.Duration

	// DynamicConfig overrides server dynamic config values, keyed by setting
	// name (e.g. "limit.maxIDLength": 255). Values must have the Go type the
	// setting expects (int, not int64, for integers). They take precedence
	// over the few defaults this package sets (among them
	// frontend.WorkflowPauseEnabled: true). Default none.
	DynamicConfig map[string]any
}

// OptionError reports an invalid Options field.
type OptionError struct {
	Field  string // name of the Options field, e.g. "FrontendPort"
	Reason string
}

func (e *OptionError) Error() string {
	return "devserver: invalid Options." + e.Field + ": " + e.Reason
}

func optErr(field, format string, args ...any) error {
	return &OptionError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// withDefaults validates o and returns a copy with defaults filled in.
// Ports left at zero in FreePorts mode stay zero and are chosen later.
func (o Options) withDefaults() (Options, error) {
	var errs []error

	if o.Ephemeral {
		if o.DataDir != "" {
			errs = append(errs, optErr("DataDir", "must be empty when Ephemeral is set, got %q", o.DataDir))
		}
	} else {
		if o.DataDir == "" {
			o.DataDir = DefaultDataDir
		}
		if strings.ContainsAny(o.DataDir, "?#") {
			errs = append(errs, optErr("DataDir", "must not contain '?' or '#' (SQLite URI), got %q", o.DataDir))
		} else if abs, err := filepath.Abs(o.DataDir); err != nil {
			errs = append(errs, optErr("DataDir", "%v", err))
		} else {
			o.DataDir = abs
		}
	}

	switch o.IP {
	case "":
		o.IP = DefaultIP
	case "localhost":
		o.IP = "127.0.0.1"
	}
	if ip := net.ParseIP(o.IP); ip == nil {
		errs = append(errs, optErr("IP", "%q is not an IP address", o.IP))
	} else if !ip.IsLoopback() {
		errs = append(errs, optErr("IP", "%q is not a loopback address; the dev server has no TLS or authentication and listens on loopback only", o.IP))
	} else {
		o.IP = ip.String()
	}

	checkPort := func(field string, p *int, def int) {
		switch {
		case *p < 0 || *p > 65535:
			errs = append(errs, optErr(field, "must be between 0 and 65535, got %d", *p))
		case *p == 0 && !o.FreePorts:
			*p = def
		}
	}
	checkPort("FrontendPort", &o.FrontendPort, DefaultFrontendPort)
	if o.HTTPPort < 0 || o.HTTPPort > 65535 {
		errs = append(errs, optErr("HTTPPort", "must be between 0 and 65535, got %d", o.HTTPPort))
	}
	if o.UIDisabled {
		o.UIPort = 0
	} else {
		checkPort("UIPort", &o.UIPort, DefaultUIPort)
	}
	if o.FrontendPort != 0 && o.HTTPPort == o.FrontendPort {
		errs = append(errs, optErr("HTTPPort", "must differ from FrontendPort (%d)", o.FrontendPort))
	}
	if o.UIPort != 0 && (o.UIPort == o.FrontendPort || o.UIPort == o.HTTPPort) {
		errs = append(errs, optErr("UIPort", "must differ from FrontendPort and HTTPPort (%d)", o.UIPort))
	}

	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if err := checkName(o.Namespace); err != nil {
		errs = append(errs, optErr("Namespace", "%v", err))
	}

	for name, typ := range o.SearchAttributes {
		if err := checkName(name); err != nil {
			errs = append(errs, optErr("SearchAttributes", "name %q: %v", name, err))
		}
		if _, ok := enumspb.IndexedValueType_name[int32(typ)]; !ok || typ == enumspb.INDEXED_VALUE_TYPE_UNSPECIFIED {
			errs = append(errs, optErr("SearchAttributes", "%q has invalid type %d", name, typ))
		}
	}

	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.ServerLogLevel == "" {
		o.ServerLogLevel = DefaultServerLogLevel
	}
	if _, err := parseLevel(o.ServerLogLevel); err != nil {
		errs = append(errs, optErr("ServerLogLevel", "%v", err))
	}

	switch {
	case o.StartTimeout < 0:
		errs = append(errs, optErr("StartTimeout", "must not be negative, got %v", o.StartTimeout))
	case o.StartTimeout == 0:
		o.StartTimeout = DefaultStartTimeout
	}

	for k := range o.DynamicConfig {
		if strings.TrimSpace(k) == "" {
			errs = append(errs, optErr("DynamicConfig", "empty key"))
		}
	}

	return o, errors.Join(errs...)
}

// checkName accepts namespace and search attribute names: non-empty, at most
// 255 bytes, printable, without spaces or slashes.
func checkName(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	if len(s) > 255 {
		return errors.New("must be at most 255 bytes")
	}
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '/' {
			return fmt.Errorf("%q contains a space, a slash or an unprintable character", s)
		}
	}
	return nil
}

// levelOff disables server logging entirely.
const levelOff = zapcore.FatalLevel + 1

func parseLevel(s string) (zapcore.Level, error) {
	switch strings.ToLower(s) {
	case "off", "none", "never":
		return levelOff, nil
	case "debug", "info", "warn", "error":
		return zapcore.ParseLevel(s)
	}
	return 0, fmt.Errorf("%q is not one of debug, info, warn, error, off", s)
}
