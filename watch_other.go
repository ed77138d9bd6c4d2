//go:build !unix

package main

import "os"

// onOutputClosed is not watched here: a closed output ends the watch at its
// next write.
func onOutputClosed(*os.File, func()) (stop func()) { return func() {} }

// isBrokenPipe is false: other systems report a closed pipe as os.ErrClosed.
func isBrokenPipe(error) bool { return false }
