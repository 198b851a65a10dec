// Package benchkit holds what the gateway's load tools (tools/load,
// tools/soak, tools/resbench) share: the flags naming the gateway they
// drive, and the process figures they read from Linux's /proc (proc(5)).
package benchkit

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Target is the gateway a tool drives.
type Target struct {
	// URL is the gateway's base URL (http://127.0.0.1:8080).
	URL *string
	// Cluster is the cluster id of the REST paths (default).
	Cluster *string
	// DB is the database the tool uses.
	DB *string
	// PID is the gateway's process id, for /proc; 0 when not sampled.
	PID *int
}

// Register declares -url, -cluster, -db and -pid on fs, writing into t's
// fields; db is the default database and pidUsage says what the pid is for.
func (t Target) Register(fs *flag.FlagSet, db, dbUsage, pidUsage string) {
	fs.StringVar(t.URL, "url", "http://127.0.0.1:8080", "gateway base URL")
	fs.StringVar(t.Cluster, "cluster", "default", "cluster id")
	fs.StringVar(t.DB, "db", db, dbUsage)
	fs.IntVar(t.PID, "pid", 0, pidUsage)
}

// Status returns a size field of /proc/<pid>/status (VmRSS, VmHWM, ...) in
// bytes (the file gives kB), and -1 when the process or the field is gone.
func Status(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// FDs returns the number of open descriptors of pid (/proc/<pid>/fd), and -1
// when it cannot be read.
func FDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}
