package main

import (
	"fmt"
	"path/filepath"
	"runtime"

	"go.temporal.io/sdk/contrib/envconfig"
)

// The worker dials an external Temporal server when the temporal CLI would
// find one configured, and starts its embedded server otherwise. The first
// of these that is set names the server (and wins over the ones below it
// for the address):
//
//  1. --address
//  2. TEMPORAL_ADDRESS
//  3. TEMPORAL_PROFILE: that profile of the CLI's config file
//  4. TEMPORAL_CONFIG_FILE: that file's "default" profile
//  5. a "default" profile in the CLI's default config file
//     ($XDG_CONFIG_HOME or ~/.config, then temporalio/temporal.toml; on
//     macOS ~/Library/Application Support/temporalio/temporal.toml)
//
// The connection itself is then read as the CLI reads it (envconfig):
// the profile from the file, overridden field by field by the TEMPORAL_*
// variables, overridden by --address and --namespace.

// externalServer says which setting names an external server, "" when none
// does. getenv is the only way it reads the environment, so that tests are
// hermetic; it reads the config file only when no variable decides.
func externalServer(address string, getenv func(string) string) (string, error) {
	switch {
	case address != "":
		return "--address", nil
	case getenv("TEMPORAL_ADDRESS") != "":
		return "TEMPORAL_ADDRESS", nil
	case getenv("TEMPORAL_PROFILE") != "":
		return "TEMPORAL_PROFILE", nil
	case getenv("TEMPORAL_CONFIG_FILE") != "":
		return "TEMPORAL_CONFIG_FILE", nil
	}
	file := defaultConfigFile(getenv)
	if file == "" {
		return "", nil
	}
	conf, err := envconfig.LoadClientConfig(envconfig.LoadClientConfigOptions{ConfigFilePath: file})
	if err != nil { // a missing file is no error
		return "", fmt.Errorf("temporal CLI config file %s: %v", file, err)
	}
	if conf.Profiles[envconfig.DefaultConfigFileProfile] != nil {
		return fmt.Sprintf("the %q profile in %s", envconfig.DefaultConfigFileProfile, file), nil
	}
	return "", nil
}

// defaultConfigFile is envconfig.DefaultConfigFilePath, computed from
// getenv instead of the process environment (os.UserConfigDir's rule).
func defaultConfigFile(getenv func(string) string) string {
	var dir string
	switch runtime.GOOS {
	case "windows":
		dir = getenv("AppData")
	case "darwin", "ios":
		if home := getenv("HOME"); home != "" {
			dir = filepath.Join(home, "Library", "Application Support")
		}
	default:
		dir = getenv("XDG_CONFIG_HOME")
		if dir == "" && getenv("HOME") != "" {
			dir = filepath.Join(getenv("HOME"), ".config")
		}
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "temporalio", "temporal.toml")
}
