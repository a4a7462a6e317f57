//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package devserver

import "os"

// lockDir only creates path: there is no advisory locking on this platform,
// so nothing stops two servers from sharing a data directory.
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}
