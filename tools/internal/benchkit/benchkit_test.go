package benchkit

import (
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTargetRegister(t *testing.T) {
	var url, cluster, db string
	var pid int
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	Target{URL: &url, Cluster: &cluster, DB: &db, PID: &pid}.Register(fs, "load", "database", "gateway pid")
	require.NoError(t, fs.Parse(nil))
	assert.Equal(t, []any{"http://127.0.0.1:8080", "default", "load", 0}, []any{url, cluster, db, pid})
	require.NoError(t, fs.Parse([]string{"-url", "http://h:1", "-cluster", "c", "-db", "d", "-pid", "7"}))
	assert.Equal(t, []any{"http://h:1", "c", "d", 7}, []any{url, cluster, db, pid})
}

func TestProcFigures(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	self := os.Getpid()
	assert.Positive(t, Status(self, "VmRSS"))
	assert.Equal(t, int64(-1), Status(self, "NoSuchField"))
	assert.Positive(t, FDs(self))
	assert.Equal(t, int64(-1), Status(-5, "VmRSS"))
	assert.Equal(t, -1, FDs(-5))
}
