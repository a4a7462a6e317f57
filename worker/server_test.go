package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExternalServer: the worker goes external exactly when the temporal
// CLI would find a server configured, and says which setting decided.
func TestExternalServer(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		t.Skip("the test writes the default config file under XDG_CONFIG_HOME (Linux's rule)")
	}
	withDefault := "[profile.default]\naddress = \"temporal.example:7233\"\n"
	onlyOther := "[profile.staging]\naddress = \"staging.example:7233\"\n"
	tests := []struct {
		name     string
		address  string
		env      map[string]string
		file     string // content of the default config file, "" for none
		wantBy   string // "" for the embedded server; "{file}" stands for the file's path
		wantErr  string
		homeOnly bool // put the file under $HOME/.config instead of $XDG_CONFIG_HOME
	}{
		{name: "nothing configured", wantBy: ""},
		{name: "flag", address: "t:7233", env: map[string]string{"TEMPORAL_ADDRESS": "u:7233"}, file: withDefault, wantBy: "--address"},
		{name: "address variable", env: map[string]string{"TEMPORAL_ADDRESS": "u:7233", "TEMPORAL_PROFILE": "staging"}, wantBy: "TEMPORAL_ADDRESS"},
		{name: "profile variable", env: map[string]string{"TEMPORAL_PROFILE": "staging"}, file: withDefault, wantBy: "TEMPORAL_PROFILE"},
		{name: "config file variable alone", env: map[string]string{"TEMPORAL_CONFIG_FILE": "/etc/temporal.toml"}, wantBy: "TEMPORAL_CONFIG_FILE"},
		{name: "default profile in the default file", file: withDefault, wantBy: `the "default" profile in {file}`},
		{name: "default file under HOME", file: withDefault, homeOnly: true, wantBy: `the "default" profile in {file}`},
		{name: "default file without a default profile", file: onlyOther, wantBy: ""},
		{name: "unreadable default file", file: "[profile.default\n", wantErr: "temporal CLI config file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tt.env {
				env[k] = v
			}
			dir := t.TempDir()
			cfgDir := dir
			if tt.homeOnly {
				env["HOME"] = dir
				cfgDir = filepath.Join(dir, ".config")
			} else {
				env["XDG_CONFIG_HOME"] = dir
			}
			file := filepath.Join(cfgDir, "temporalio", "temporal.toml")
			if tt.file != "" {
				require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
				require.NoError(t, os.WriteFile(file, []byte(tt.file), 0o644))
			}
			by, err := externalServer(tt.address, func(k string) string { return env[k] })
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, strings.ReplaceAll(tt.wantBy, "{file}", file), by)
		})
	}
}

// TestRunDialsTheDefaultProfile: a default profile in the CLI's config file
// alone makes the worker dial that profile's server, and embedded-only
// flags are refused naming the file.
func TestRunDialsTheDefaultProfile(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		t.Skip("the test writes the default config file under XDG_CONFIG_HOME (Linux's rule)")
	}
	isolateEnv(t)
	dir := os.Getenv("XDG_CONFIG_HOME")
	file := filepath.Join(dir, "temporalio", "temporal.toml")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte("[profile.default]\naddress = \"127.0.0.1:1\"\nnamespace = \"agents\"\n"), 0o644))
	ctx := testContext(t, 20*time.Second)

	var stdout, stderr bytes.Buffer
	err := run(ctx, nil, &stdout, &stderr)
	require.EqualError(t, err, "dial temporal at 127.0.0.1:1: connection refused")

	err = run(ctx, []string{"--ephemeral"}, &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `--ephemeral applies to the embedded server only, but an external server is configured (by the "default" profile in `+file+")")

	// A variable wins over the file for the address, as in the temporal CLI.
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:2")
	err = run(ctx, nil, &stdout, &stderr)
	require.EqualError(t, err, "dial temporal at 127.0.0.1:2: connection refused")
}
