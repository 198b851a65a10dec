package http

import (
	"time"

	"github.com/gofiber/fiber/v2"
)

// admissionClass names the concurrency budget an operation draws from.
// Budgets are separate so that one kind of traffic cannot starve another:
// lookups stay fast while writes queue or are throttled.
type admissionClass uint8

const (
	admitNone admissionClass = iota // probes, the document, the cluster list: no cluster I/O
	admitMetadata
	admitWrite
	admitLookup
	admitPrefixLookup
	admitScan
	admissionClasses
)

var admissionNames = [admissionClasses]string{
	admitMetadata:     "metadata",
	admitWrite:        "write",
	admitLookup:       "lookup",
	admitPrefixLookup: "prefix lookup",
	admitScan:         "scan",
}

// Admission configures request admission. A zero concurrency leaves that
// class unbounded; zero rates disable the write rate limit.
type Admission struct {
	// MetadataConcurrency bounds concurrent catalog requests
	// (gateway.rest.metadata.max-concurrent-requests).
	MetadataConcurrency int
	// WriteConcurrency bounds concurrent writes
	// (gateway.rest.write.max-concurrent-requests).
	WriteConcurrency int
	// LookupConcurrency bounds concurrent lookups
	// (gateway.rest.lookup.max-concurrent-requests).
	LookupConcurrency int
	// PrefixLookupConcurrency bounds concurrent prefix lookups
	// (gateway.rest.prefix-lookup.max-concurrent-requests).
	PrefixLookupConcurrency int
	// ScanConcurrency bounds concurrent log scans and offset listings,
	// long polls included (gateway.rest.scan.max-concurrent-requests).
	ScanConcurrency int
	// MaxWait bounds the wait for a slot or rate token before 429
	// resource_exhausted (gateway.rest.admission.max-wait); 0 is
	// defaultAdmissionWait. A request never waits past its own
	// deadline.
	MaxWait time.Duration
	// WriteRequestsPerSecond and WriteBytesPerSecond rate-limit writes
	// (gateway.rest.write.rate-limit.*, applied only when enabled).
	WriteRequestsPerSecond int
	WriteBytesPerSecond    int64
}

// admission holds the budgets of one API instance.
type admission struct {
	limits    [admissionClasses]*concurrencyLimit
	writeRate *rateLimit
}

func newAdmission(o Admission, maxBody int64) *admission {
	adm := &admission{}
	for class, n := range map[admissionClass]int{
		admitMetadata:     o.MetadataConcurrency,
		admitWrite:        o.WriteConcurrency,
		admitLookup:       o.LookupConcurrency,
		admitPrefixLookup: o.PrefixLookupConcurrency,
		admitScan:         o.ScanConcurrency,
	} {
		if n > 0 {
			adm.limits[class] = newConcurrencyLimit(admissionNames[class], n, o.MaxWait)
		}
	}
	if o.WriteRequestsPerSecond > 0 || o.WriteBytesPerSecond > 0 {
		adm.writeRate = newRateLimit("write", o.WriteRequestsPerSecond, o.WriteBytesPerSecond, maxBody, o.MaxWait)
	}
	return adm
}

// admit runs the rest of the chain inside the operation's budget: first the
// write rate limit (so a throttled request holds no slot), then a slot of
// the class's concurrency limit, held until the handler returns.
func (a *api) admit(class admissionClass) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if class == admitWrite && a.admission.writeRate != nil {
			// The decoded bytes: a gzip body counts what it expands to. A
			// streamed body pays for them as they are read (chargeStreamed).
			size := 0
			if streamedMediaType(c) == "" {
				var err error
				if size, err = a.decodedBodySize(c, routeSpec{admission: class}); err != nil {
					return err
				}
			}
			if err := a.admission.writeRate.Admit(c.UserContext(), size); err != nil {
				return err
			}
		}
		limit := a.admission.limits[class]
		if limit == nil {
			return c.Next()
		}
		release, err := limit.Acquire(c.UserContext())
		if err != nil {
			return err
		}
		handed := false
		defer func() {
			if !handed {
				release()
			}
		}()
		err = c.Next()
		// A streamed answer holds the slot until its stream ends.
		handed = err == nil && handOver(c, release)
		return err
	}
}
