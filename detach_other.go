//go:build !unix

package main

import "errors"

// startDetached is not offered here: the import finishes its background
// work before it exits.
func startDetached(string, []string, []string) (int, error) {
	return 0, errors.ErrUnsupported
}

// lowerPriority does nothing here.
func lowerPriority() {}
