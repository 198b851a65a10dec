package bootstrap

import (
	"context"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/fx"

	httpadapter "github.com/fluss-gateway/fluss-gateway-go/adapters/http"
	"github.com/fluss-gateway/fluss-gateway-go/adapters/telemetry"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/internal/membudget"
)

// The process's resource limits (issue 21): the Go memory limit from the
// container's cgroup, the data-plane memory budget derived from it, and the
// descriptor limit the connection cap stays below.

// memLimitRatio is the share of the cgroup memory limit given to GOMEMLIMIT;
// the rest is headroom for memory the Go runtime does not manage (thread
// stacks, the kernel's socket buffers are not counted anyway).
const memLimitRatio = 0.9

// Bounds of the derived memory budget.
const (
	// defaultMemoryBudget applies when the process has no memory limit.
	defaultMemoryBudget = 64 << 20
	minMemoryBudget     = 16 << 20
	maxMemoryBudget     = 1 << 30
	// memoryBudgetShare is the share of the memory limit the budget gets:
	// the rest is the runtime's headroom (the garbage collector's, the
	// writer's buffers, metadata caches, connections).
	memoryBudgetShare = 4
)

// setMemoryLimit sets GOMEMLIMIT to memLimitRatio of the cgroup's memory
// limit (github.com/KimMachineGun/automemlimit), unless GOMEMLIMIT is set in
// the environment or AUTOMEMLIMIT=off, and returns the limit in force
// (math.MaxInt64: none).
func setMemoryLimit(log *slog.Logger) int64 {
	limit, err := memlimit.Set(memlimit.WithRatio(memLimitRatio), memlimit.WithProvider(memlimit.FromCgroup),
		memlimit.WithLogger(log.With(slog.String("logger", "memlimit"))))
	if err != nil {
		log.Warn("cannot derive GOMEMLIMIT from the cgroup memory limit", "error", err)
	}
	return limit
}

// fallbackGoMemLimit is the soft Go memory limit of a process that has no
// memory limit at all (no cgroup limit, no GOMEMLIMIT, AUTOMEMLIMIT not
// off): the default budget, the writer's default buffer (64 MiB) and the
// runtime's baseline fit well below it, and the garbage collector works
// harder near it instead of letting the heap double. It is soft: a process
// whose live memory exceeds it keeps running.
const fallbackGoMemLimit = 192 << 20

// applyFallbackMemoryLimit sets fallbackGoMemLimit when limit says there is
// none and the environment does not opt out; it returns the limit in force.
func applyFallbackMemoryLimit(limit int64, log *slog.Logger) int64 {
	if limit != math.MaxInt64 || os.Getenv("GOMEMLIMIT") != "" || os.Getenv("AUTOMEMLIMIT") == "off" {
		return limit
	}
	debug.SetMemoryLimit(fallbackGoMemLimit)
	log.Info("no memory limit found: soft GOMEMLIMIT set", "gomemlimit", config.FormatByteSize(fallbackGoMemLimit))
	return fallbackGoMemLimit
}

// setProcessMemoryLimit sets the process's Go memory limit at start
// (bootstrap.Main): from the cgroup, or the soft fallback when there is no
// limit at all and the memory budget is derived.
func setProcessMemoryLimit(cfg *config.Config, log *slog.Logger) {
	limit := setMemoryLimit(log)
	if cfg.REST.MemoryBudgetBytes <= 0 {
		applyFallbackMemoryLimit(limit, log)
	}
}

// derivedMemoryBudget is the default data-plane budget for a process whose
// Go memory limit is limit: a quarter of it, within [16 MiB, 1 GiB], or
// 64 MiB without a limit.
func derivedMemoryBudget(limit int64) int64 {
	if limit <= 0 || limit == math.MaxInt64 {
		return defaultMemoryBudget
	}
	return min(max(limit/memoryBudgetShare, minMemoryBudget), maxMemoryBudget)
}

// newMemoryBudget builds the data-plane budget (gateway.rest.memory-budget-bytes,
// or derived from the Go memory limit setProcessMemoryLimit set), with its
// metrics:
// fluss_gateway_memory_budget_{capacity,used}_bytes,
// fluss_gateway_memory_budget_waited_bytes_total and
// fluss_gateway_memory_budget_refused_total.
func newMemoryBudget(lc fx.Lifecycle, cfg *config.Config, log *slog.Logger, tel *telemetry.Providers) *membudget.Budget {
	limit := debug.SetMemoryLimit(-1)
	size, source := cfg.REST.MemoryBudgetBytes, "configured"
	if size <= 0 {
		size, source = derivedMemoryBudget(limit), "derived from the memory limit"
		if limit == fallbackGoMemLimit {
			// The soft limit of a process without one: the budget is the
			// default of an unlimited process.
			size = defaultMemoryBudget
		}
	}
	b := membudget.New(size, cfg.REST.AdmissionMaxWait)
	goLimit := "none"
	if limit > 0 && limit != math.MaxInt64 {
		goLimit = config.FormatByteSize(limit)
	}
	log.Info("memory budget", "budget", config.FormatByteSize(size), "source", source, "gomemlimit", goLimit,
		"key", config.KeyRESTMemoryBudget)
	if tel != nil && tel.MeterProvider != nil {
		registerBudgetMetrics(tel.MeterProvider.Meter(telemetry.ScopeName), b, log)
	}
	rc := newReclaimer(b, reclaimEvery)
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error { rc.start(); return nil },
		OnStop:  func(context.Context) error { rc.close(); return nil },
	})
	return b
}

func registerBudgetMetrics(m metric.Meter, b *membudget.Budget, log *slog.Logger) {
	capacity, err1 := m.Int64ObservableGauge("fluss.gateway.memory.budget.capacity", metric.WithUnit("By"),
		metric.WithDescription("Size of the data-plane memory budget (gateway.rest.memory-budget-bytes)."))
	used, err2 := m.Int64ObservableGauge("fluss.gateway.memory.budget.used", metric.WithUnit("By"),
		metric.WithDescription("Bytes of the data-plane memory budget held by requests in flight (bodies, decompressed bodies, decoded rows, lookup answers)."))
	waited, err3 := m.Int64ObservableCounter("fluss.gateway.memory.budget.waited", metric.WithUnit("By"),
		metric.WithDescription("Bytes requests had to wait for because the memory budget was full (granted later or refused)."))
	refused, err4 := m.Int64ObservableCounter("fluss.gateway.memory.budget.refused", metric.WithUnit("{request}"),
		metric.WithDescription("Requests refused with 429 resource_exhausted because the memory budget stayed full for the bounded wait."))
	_, err5 := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := b.Stats()
		o.ObserveInt64(capacity, s.Capacity)
		o.ObserveInt64(used, s.InUse)
		o.ObserveInt64(waited, s.WaitedBytes)
		o.ObserveInt64(refused, s.Refused)
		return nil
	}, capacity, used, waited, refused)
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			log.Warn("memory budget metrics", "error", err)
			return
		}
	}
}

// fdReserve are the descriptors kept out of the REST connection cap: the
// Fluss connections, the metrics listener, files and the listeners.
const fdReserve = 256

// raiseDescriptorLimit raises the soft RLIMIT_NOFILE to the hard limit where
// allowed (the Go runtime does so too on Linux; this makes it explicit and
// reports the result) and returns the soft limit in force (0: unknown).
func raiseDescriptorLimit(log *slog.Logger) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			log.Warn("cannot raise the descriptor limit", "soft", lim.Cur, "hard", lim.Max, "error", err)
		} else {
			lim = raised
		}
	}
	return lim.Cur
}

// derivedMaxConnections is the default REST connection cap below a
// descriptor limit of soft: three quarters of it, and fdReserve below it,
// at least 16; 0 (no cap) when the limit is unknown.
func derivedMaxConnections(soft uint64) int {
	if soft == 0 || soft > math.MaxInt32 {
		return 0
	}
	n := min(int(soft)*3/4, int(soft)-fdReserve)
	return max(n, 16)
}

// registerListenerMetrics exposes the REST listener's connection counts:
// fluss_gateway_rest_connections_open, fluss_gateway_rest_accept_failures_total
// and fluss_gateway_rest_connections_refused_total.
func registerListenerMetrics(m metric.Meter, g *httpadapter.GuardedListener, log *slog.Logger) {
	open, err1 := m.Int64ObservableGauge("fluss.gateway.rest.connections.open", metric.WithUnit("{connection}"),
		metric.WithDescription("Open REST connections, lingering ones included (gateway.rest.max-connections caps them)."))
	failures, err2 := m.Int64ObservableCounter("fluss.gateway.rest.accept.failures", metric.WithUnit("{error}"),
		metric.WithDescription("Failed accepts of the REST listener (EMFILE: the descriptor limit), each retried with a backoff; /ready answers 503 while they last."))
	refused, err3 := m.Int64ObservableCounter("fluss.gateway.rest.connections.refused", metric.WithUnit("{connection}"),
		metric.WithDescription("REST connections refused with 429 by gateway.rest.max-connections-per-address."))
	_, err4 := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(open, g.Open())
		o.ObserveInt64(failures, g.AcceptFailures())
		o.ObserveInt64(refused, g.RefusedPerAddress())
		return nil
	}, open, failures, refused)
	for _, err := range []error{err1, err2, err3, err4} {
		if err != nil {
			log.Warn("REST listener metrics", "error", err)
			return
		}
	}
}

// reclaimer returns the heap of a burst to the operating system once the
// burst is over: when the budget, after having been used to at least a
// quarter, is idle again, debug.FreeOSMemory runs (at most every
// reclaimEvery). Without it the Go scavenger gives the pages back over
// minutes, and the RSS of an idle gateway stays at its peak.
type reclaimer struct {
	b     *membudget.Budget
	every time.Duration
	stop  chan struct{}
	done  chan struct{}
	// reclaims counts the FreeOSMemory calls (tests).
	reclaims int
}

// reclaimEvery spaces the reclaims: each is a full garbage collection.
const reclaimEvery = 5 * time.Second

func newReclaimer(b *membudget.Budget, every time.Duration) *reclaimer {
	return &reclaimer{b: b, every: every, stop: make(chan struct{}), done: make(chan struct{})}
}

func (r *reclaimer) start() { go r.run() }

func (r *reclaimer) close() {
	close(r.stop)
	<-r.done
}

func (r *reclaimer) run() {
	defer close(r.done)
	tick := time.NewTicker(r.every / 5)
	defer tick.Stop()
	var peak int64
	var last time.Time
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		used := r.b.Stats().InUse
		peak = max(peak, used)
		if used == 0 && peak >= r.b.Capacity()/4 && time.Since(last) >= r.every {
			// Two collections: objects in sync.Pools survive the first.
			runtime.GC()
			debug.FreeOSMemory()
			r.reclaims++
			peak, last = 0, time.Now()
		}
	}
}
