package telemetry

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// optKey names one attribute combination of one family group: family
// tells the recorder apart, s the attribute values it builds from, table
// the table the attributes are labelled with (zero when the table is not a
// label).
type optKey struct {
	family     uint8
	s0, s1, s2 string
	s3         string
	table      domain.TablePath
}

// Families of optKey.
const (
	famRequest uint8 = iota
	famRequestDuration
	famEntries
	famIngest
	famWriter
	famLookups
)

// maxCachedOptions bounds the cached combinations; beyond it options are
// built per call, as without the cache.
const maxCachedOptions = 4096

// optionCache keeps the measurement options (attribute sets) recorded once
// per request, so that a request does not build, sort and hash its
// attribute sets again (2 % of the gateway's CPU at 500 × 16 PK upserts).
// The attributes of a key never change: the capped table and database
// values (labelCap) are stable once handed out. Safe for concurrent use.
type optionCache struct {
	mu sync.RWMutex
	m  map[optKey]*cachedOption
}

// cachedOption is one attribute set as the instruments take it: add and
// record are one-element option lists, passed with `...` so that a
// measurement does not allocate its variadic list (issue 22).
type cachedOption struct {
	opt    metric.MeasurementOption
	add    []metric.AddOption
	record []metric.RecordOption
}

func newCachedOption(attrs []attribute.KeyValue) *cachedOption {
	opt := metric.WithAttributeSet(attribute.NewSet(attrs...))
	return &cachedOption{opt: opt, add: []metric.AddOption{opt}, record: []metric.RecordOption{opt}}
}

// get returns the option of k, built from build's attributes on first use.
func (c *optionCache) get(k optKey, build func() []attribute.KeyValue) metric.MeasurementOption {
	return c.options(k, build).opt
}

// options is get with the option lists of the instruments.
func (c *optionCache) options(k optKey, build func() []attribute.KeyValue) *cachedOption {
	c.mu.RLock()
	o, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return o
	}
	o = newCachedOption(build())
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[optKey]*cachedOption)
	}
	if len(c.m) < maxCachedOptions {
		c.m[k] = o
	}
	c.mu.Unlock()
	return o
}

// labelled is table as far as it is a label (zero parts when not): the
// part of an optKey the table contributes.
func (in *Instrumentation) labelled(table domain.TablePath) domain.TablePath {
	var t domain.TablePath
	if in.tableLabel {
		t = table
	} else if in.dbLabel {
		t.Database = table.Database
	}
	return t
}
