package config

import (
	"time"
)

// Idempotency-Key extension keys (gateway-go extensions, docs/idempotency.md).
const (
	KeyIdempotencyEnabled  = "gateway.idempotency.enabled"
	KeyIdempotencyDatabase = "gateway.idempotency.database"
	KeyIdempotencyTable    = "gateway.idempotency.table"
	KeyIdempotencyWindow   = "gateway.idempotency.window"
	KeyIdempotencyLease    = "gateway.idempotency.lease"
	KeyIdempotencyBuckets  = "gateway.idempotency.buckets"
)

// Bounds of gateway.idempotency.window: a key is looked up in every ledger
// partition of its window (hourly partitions up to 6 h, daily above).
const (
	MinIdempotencyWindow = time.Minute
	MaxIdempotencyWindow = 7 * 24 * time.Hour
)

// Idempotency configures the Idempotency-Key extension of writes
// (`gateway.idempotency.*`).
type Idempotency struct {
	// Enabled serves writes carrying Idempotency-Key; when false they are
	// answered 501 unsupported. Writes without the header are unaffected.
	Enabled bool
	// Database and Table name the ledger table (a first_row primary-key
	// table the gateway creates on first use).
	Database string
	Table    string
	// Window is how long a key is remembered (at least; the ledger's
	// retention keeps it up to one partition unit longer).
	Window time.Duration
	// Lease is how long a claim of a request without a deadline stays
	// valid; requests with a deadline (all REST requests) hold it until
	// their deadline plus 2 s.
	Lease time.Duration
	// Buckets is the ledger's bucket count when the gateway creates it; 0
	// takes the cluster's default.
	Buckets int
}

// DefaultIdempotency is the default `gateway.idempotency.*` section.
func DefaultIdempotency() Idempotency {
	return Idempotency{Enabled: true, Database: "fluss_gateway", Table: "idempotency_keys", Window: 24 * time.Hour, Lease: time.Minute}
}

var idempotencyEntries = []entry[Config]{
	boolEntry(KeyIdempotencyEnabled, func(c *Config) *bool { return &c.Idempotency.Enabled }),
	stringEntry(KeyIdempotencyDatabase, func(c *Config) *string { return &c.Idempotency.Database }),
	stringEntry(KeyIdempotencyTable, func(c *Config) *string { return &c.Idempotency.Table }),
	durationEntry(KeyIdempotencyWindow, func(c *Config) *time.Duration { return &c.Idempotency.Window }),
	durationEntry(KeyIdempotencyLease, func(c *Config) *time.Duration { return &c.Idempotency.Lease }),
	countEntry(KeyIdempotencyBuckets, func(c *Config) *int { return &c.Idempotency.Buckets }),
}

func (c *Config) validateIdempotency(add func(string, ...any)) {
	i := c.Idempotency
	if !i.Enabled {
		return
	}
	if i.Database == "" || i.Table == "" {
		add("%s and %s must name the ledger table", KeyIdempotencyDatabase, KeyIdempotencyTable)
	}
	if i.Window < MinIdempotencyWindow || i.Window > MaxIdempotencyWindow {
		add("%s must be between %s and %s", KeyIdempotencyWindow, FormatDuration(MinIdempotencyWindow), FormatDuration(MaxIdempotencyWindow))
	}
	checkDuration(add, KeyIdempotencyLease, i.Lease)
	if i.Buckets < 0 || i.Buckets > 1024 {
		add("%s must be between 0 and 1024", KeyIdempotencyBuckets)
	}
}
