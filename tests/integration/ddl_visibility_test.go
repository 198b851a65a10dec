//go:build integration

package integration

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// ddlGateway is one in-process gateway whose DDL the tests drive through the
// application layer (application.CatalogService, the same use cases the
// REST catalog routes call), so that they do not depend on the REST shapes
// of the catalog routes; writes and lookups go through REST. Every DDL call
// of these tests is in the ddl* helpers below: adapt them in one place.
type ddlGateway struct {
	*gateway
	catalog *application.CatalogService
}

func startDDLGateway(t *testing.T) *ddlGateway {
	t.Helper()
	cfg, err := config.Load(config.Options{Env: map[string]string{
		"FLUSS_GATEWAY__REST__LISTEN":                         "127.0.0.1:0",
		"FLUSS_GATEWAY__METRICS__ENABLED":                     "false",
		"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE":            "0s",
		"FLUSS_GATEWAY__CLUSTERS":                             "default",
		"FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS": wrBootstrap(t),
	}})
	require.NoError(t, err)
	var cat *application.CatalogService
	base := runGateway(t, cfg, slog.New(slog.NewTextHandler(&testlog.Buffer{}, nil)), fx.Populate(&cat))
	return &ddlGateway{
		gateway: &gateway{t: t, base: base + "/v1/clusters/default"},
		catalog: cat,
	}
}

var ddlScope = application.Scope{Cluster: "default", Principal: domain.Principal{Name: "anonymous", Method: "trust"}}

func ddlCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ddlColumn(name string, root domain.TypeRoot, nullable bool) domain.Column {
	return domain.Column{Name: name, Type: domain.DataType{Root: root, Nullable: nullable}, ID: -1}
}

func ddlCreateDatabase(t *testing.T, g *ddlGateway, db string) {
	t.Helper()
	_, _, err := g.catalog.CreateDatabase(ddlCtx(t), ddlScope, application.CreateDatabase{Name: db})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = g.catalog.DropDatabase(context.Background(), ddlScope, application.DropDatabase{Name: db, Cascade: true, IgnoreIfNotExists: true})
	})
}

// ddlCreatePKTable creates db.table with the columns and primary key id and
// buckets buckets.
func ddlCreatePKTable(t *testing.T, g *ddlGateway, path domain.TablePath, buckets int, cols ...domain.Column) {
	t.Helper()
	_, _, err := g.catalog.CreateTable(ddlCtx(t), ddlScope, application.CreateTable{Path: path, Descriptor: domain.TableDescriptor{
		Schema:      domain.Schema{Columns: cols, PrimaryKey: []string{cols[0].Name}},
		BucketCount: buckets,
	}})
	require.NoError(t, err)
}

func ddlAddColumn(t *testing.T, g *ddlGateway, path domain.TablePath, col domain.Column) {
	t.Helper()
	_, _, err := g.catalog.AlterTable(ddlCtx(t), ddlScope, application.AlterTable{Path: path,
		Changes: []domain.TableChange{{Kind: domain.ChangeAddColumn, Column: col}}})
	require.NoError(t, err)
}

func ddlDropTable(t *testing.T, g *ddlGateway, path domain.TablePath) {
	t.Helper()
	require.NoError(t, g.catalog.DropTable(ddlCtx(t), ddlScope, path, false))
}

// writeOne upserts one row through REST and requires it to succeed.
func (g *ddlGateway) writeOne(path domain.TablePath, row map[string]any) {
	g.t.Helper()
	status, body := g.do(http.MethodPost, fmt.Sprintf("/databases/%s/tables/%s/records", path.Database, path.Table),
		map[string]any{"entries": []any{map[string]any{"id": "e1", "upsert": row}}})
	require.Equal(g.t, http.StatusOK, status, "%v", body)
	require.EqualValues(g.t, 1, body["success_count"], "%v", body)
}

// lookupOne looks key up through REST and returns the row (nil when absent).
func (g *ddlGateway) lookupOne(path domain.TablePath, key map[string]any) map[string]any {
	g.t.Helper()
	status, body := g.do(http.MethodPost, fmt.Sprintf("/databases/%s/tables/%s/records/lookup", path.Database, path.Table),
		map[string]any{"keys": []any{key}})
	require.Equal(g.t, http.StatusOK, status, "%v", body)
	res := body["results"].([]any)[0].(map[string]any)
	if res["found"] != true {
		return nil
	}
	return res["row"].(map[string]any)
}

// TestDDLAddColumnIsVisibleAtOnce: right after the gateway's own add_column
// answers, a write naming the new column and a lookup returning it work
// through the same gateway (no wait, no retry by the test), and the peer
// client reads the row where it landed.
func TestDDLAddColumnIsVisibleAtOnce(t *testing.T) {
	g := startDDLGateway(t)
	db := gwName("ddl_add")
	ddlCreateDatabase(t, g, db)
	path := domain.TablePath{Database: db, Table: "t"}
	ddlCreatePKTable(t, g, path, 2, ddlColumn("id", domain.TypeInteger, false), ddlColumn("name", domain.TypeString, true))

	// Warm every cache with the old definition first.
	g.writeOne(path, map[string]any{"id": 1, "name": "before"})
	require.Equal(t, "before", g.lookupOne(path, map[string]any{"id": 1})["name"])

	ddlAddColumn(t, g, path, ddlColumn("extra", domain.TypeBigInt, true))
	g.writeOne(path, map[string]any{"id": 2, "name": "after", "extra": "1234567890123"})
	row := g.lookupOne(path, map[string]any{"id": 2})
	require.NotNil(t, row)
	assert.Equal(t, "1234567890123", row["extra"])
	assert.Nil(t, g.lookupOne(path, map[string]any{"id": 1})["extra"], "the old row reads with the new column null")

	p := peerCmd(t, "lookup", db, "t", "--key", `{"id": 2}`)
	require.Equal(t, true, p["found"], "%v", p)
	assert.EqualValues(t, 1234567890123, p["row"].(map[string]any)["extra"])
}

// TestDDLRecreateIsVisibleAtOnce: drop, then re-create the table with other
// columns (another table id); the next write and lookup use the new
// definition.
func TestDDLRecreateIsVisibleAtOnce(t *testing.T) {
	g := startDDLGateway(t)
	db := gwName("ddl_re")
	ddlCreateDatabase(t, g, db)
	path := domain.TablePath{Database: db, Table: "t"}
	ddlCreatePKTable(t, g, path, 2, ddlColumn("id", domain.TypeInteger, false), ddlColumn("name", domain.TypeString, true))
	g.writeOne(path, map[string]any{"id": 1, "name": "old"})
	require.NotNil(t, g.lookupOne(path, map[string]any{"id": 1}))

	ddlDropTable(t, g, path)
	ddlCreatePKTable(t, g, path, 3, ddlColumn("id", domain.TypeInteger, false), ddlColumn("city", domain.TypeString, true),
		ddlColumn("n", domain.TypeBigInt, true))
	g.writeOne(path, map[string]any{"id": 5, "city": "Oslo", "n": 7})
	row := g.lookupOne(path, map[string]any{"id": 5})
	require.NotNil(t, row)
	assert.Equal(t, map[string]any{"id": float64(5), "city": "Oslo", "n": "7"}, row)
	assert.Nil(t, g.lookupOne(path, map[string]any{"id": 1}), "the old table's row is gone")

	p := peerCmd(t, "lookup", db, "t", "--key", `{"id": 5}`)
	require.Equal(t, true, p["found"], "%v", p)
	assert.Equal(t, "Oslo", p["row"].(map[string]any)["city"])
}

// TestDDLCreateThenWriteAtOnce: a table is writable as soon as its creation
// answers: the write right after it succeeds and the peer reads the row.
func TestDDLCreateThenWriteAtOnce(t *testing.T) {
	g := startDDLGateway(t)
	db := gwName("ddl_new")
	ddlCreateDatabase(t, g, db)
	for i := range 3 {
		path := domain.TablePath{Database: db, Table: fmt.Sprintf("t%d", i)}
		ddlCreatePKTable(t, g, path, 4, ddlColumn("id", domain.TypeInteger, false), ddlColumn("v", domain.TypeString, true))
		g.writeOne(path, map[string]any{"id": i, "v": "x"})
		assert.Equal(t, "x", g.lookupOne(path, map[string]any{"id": i})["v"])
		p := peerCmd(t, "lookup", db, path.Table, "--key", fmt.Sprintf(`{"id": %d}`, i))
		require.Equal(t, true, p["found"], "%v", p)
	}
}
