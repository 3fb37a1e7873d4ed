//go:build linux

package mounttest

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive lock on dir/.install.lock, across processes:
// go test runs test binaries of several packages at once, and two of them
// may install the Inspector into the same folder.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(dir+"/.install.lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
