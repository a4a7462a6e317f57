//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package devserver

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive, non-blocking advisory lock on path (created if
// missing). The lock is released by closing the returned file, or by the
// kernel when the process exits, so a crash never leaves a stale lock.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is locked: %w", path, ErrDataDirInUse)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, nil
}
