//go:build !unix

package bolt

import "os"

// mapFile reads the file where mapping it is not wired up.
func mapFile(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}

func releaseMapped([]byte) {}

// mapPrivate reads the file into memory where mapping is not wired up.
func mapPrivate(path string) ([]byte, error) { return os.ReadFile(path) }

func unmapPrivate([]byte) {}
