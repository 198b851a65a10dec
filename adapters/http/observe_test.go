package http

import (
	"context"
	nethttp "net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

type observed struct {
	method, route, code string
	status              int
	table               domain.TablePath
}

type recordingObserver struct {
	mu  sync.Mutex
	got []observed
}

func (o *recordingObserver) ObserveRequestDetail(_ context.Context, method, route string, status int, code string, table domain.TablePath, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, observed{method, route, code, status, table})
}

func (o *recordingObserver) last(t *testing.T) observed {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	require.NotEmpty(t, o.got)
	return o.got[len(o.got)-1]
}

// TestObserverLabels: the REST observer gets the route template, the error
// code and the table, also for a request refused before routing (an
// over-limit body is attributed to its route, not `<unmatched>`).
func TestObserverLabels(t *testing.T) {
	t.Parallel()
	obs := &recordingObserver{}
	g := newGateway(t, func(o *Options, _ *Deps) { o.Observer = obs })
	records := "/v1/clusters/default/databases/shop/tables/orders/records"

	// The body limit is enforced while reading, before any handler: only a
	// real listener observes it.
	base := serveOnListener(t, g)
	resp, err := nethttp.Post(base+records, "application/json",
		strings.NewReader(`{"entries":[`+strings.Repeat(" ", 2*testMaxBody)+`]}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 413, resp.StatusCode)
	got := obs.last(t)
	assert.Equal(t, pathRecords, got.route)
	assert.Equal(t, "limit_exceeded", got.code)
	assert.Equal(t, domain.TablePath{Database: "shop", Table: "orders"}, got.table)

	r := g.call("GET", "/v1/clusters/default/databases/nope", "")
	require.Equal(t, 404, r.status)
	got = obs.last(t)
	assert.Equal(t, pathDatabase, got.route)
	assert.Equal(t, r.errorCode(t), got.code)
	assert.Equal(t, domain.TablePath{}, got.table, "a name that names nothing takes no label (issue 27)")

	r = g.call("GET", "/v1/clusters", "")
	require.Equal(t, 200, r.status)
	got = obs.last(t)
	assert.Equal(t, "", got.code)
	assert.Equal(t, domain.TablePath{}, got.table)

	g.call("GET", "/v2/nothing", "")
	assert.Equal(t, "", obs.last(t).route, "no route fits")
}
