//go:build !unix

package retrieval

import "testing"

func reportCPU(_ *testing.B, run func()) { run() }
