//go:build !unix

package fileio

import "os"

// MapFile reads the file where mapping it is not wired up.
func MapFile(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}

// ReleaseMapped does nothing where mapping is not wired up.
func ReleaseMapped([]byte) {}

// ReleaseReadPages does nothing where mapping is not wired up.
func ReleaseReadPages([]byte) {}

// MapPrivate reads the file into memory where mapping is not wired up.
func MapPrivate(path string) ([]byte, error) { return os.ReadFile(path) }

// UnmapPrivate does nothing where mapping is not wired up.
func UnmapPrivate([]byte) {}
