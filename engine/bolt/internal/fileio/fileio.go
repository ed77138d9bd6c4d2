// Package fileio is how engine/bolt's derived files (the table snapshot,
// the content index) reach the disk: written beside their final path and
// renamed into place, durably; mapped read-only and read in place, their
// pages released when a scan has passed.
package fileio

import (
	"hash/crc32"
	"os"
	"path/filepath"
)

// Castagnoli is the CRC-32C table the files' checksums use.
var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteAtomic writes a file beside its final path, syncs it, renames it
// over the path and syncs the directory: a crash leaves the old file or the
// new one, never a torn one.
func WriteAtomic(path string, write func(f *os.File) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir syncs a directory, so a rename into it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
