//go:build integration

package integration

import (
	"os"
	"strings"
)

// flussVersion is the version of the cluster under test, as tests/run.sh
// (and deployments/local/fluss-cluster.sh) name it: FLUSS_VERSION,
// 0.9.1-incubating when unset.
func flussVersion() string {
	if v := os.Getenv("FLUSS_VERSION"); v != "" {
		return v
	}
	return "0.9.1-incubating"
}

// fluss10 reports whether the cluster under test is Fluss 1.0 (PUT_KV v2,
// KV backpressure).
func fluss10() bool { return strings.HasPrefix(flussVersion(), "1.") }
