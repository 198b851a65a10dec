package application

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// TestScanPicksUpANewColumn: a scanner answering rows of a schema newer
// than the cached definition (a column was added since) makes the scan
// refresh the definition and render with it; a projection naming the new
// column refreshes it too instead of a 400.
func TestScanPicksUpANewColumn(t *testing.T) {
	c, log := newScanFixture(1)
	log.append(0, 2)
	log.schemaID = 1
	schema := int32(1)
	cols := []domain.Column{intColumn("id", false), intColumn("n", true)}
	c.cat.getTable = func(p domain.TablePath) (domain.TableInfo, error) {
		log.mu.Lock()
		defer log.mu.Unlock()
		return domain.TableInfo{Path: p, TableID: log.tableID, SchemaID: schema, Descriptor: domain.TableDescriptor{
			Schema: domain.Schema{Columns: cols}}}, nil
	}
	defs := &cachedDefinitions{cat: c.cat, cached: map[domain.TablePath]domain.TableInfo{}}
	s := newScanService(t, cachingScanClusters{c, defs}, "k")
	ctx := context.Background()
	res, err := s.Scan(ctx, alice, scanPath, ScanRequest{Start: &ScanStart{Position: domain.OffsetEarliest}})
	require.NoError(t, err)
	assert.Len(t, res.Columns, 2)

	// The column `note` is added; the scanner already decodes into it.
	log.mu.Lock()
	schema, log.schemaID = 2, 2
	cols = append(cols, intColumn("note", true))
	log.mu.Unlock()
	refreshes := defs.refreshes
	res, err = s.Scan(ctx, alice, scanPath, ScanRequest{Start: &ScanStart{Position: domain.OffsetEarliest}})
	require.NoError(t, err)
	assert.Len(t, res.Columns, 3, "rendered with the refreshed definition")
	assert.Equal(t, refreshes+1, defs.refreshes)
	assert.Equal(t, int32(2), res.Table.Info.SchemaID)

	// A cached definition from before the change, and a projection naming
	// the new column: refreshed instead of a 400.
	defs.mu.Lock()
	defs.cached[scanPath] = domain.TableInfo{Path: scanPath, TableID: log.tableID, SchemaID: 1, Descriptor: domain.TableDescriptor{
		Schema: domain.Schema{Columns: cols[:2]}}}
	defs.mu.Unlock()
	res, err = s.Scan(ctx, alice, scanPath, ScanRequest{Start: &ScanStart{Position: domain.OffsetEarliest}, Columns: []string{"note"}})
	require.NoError(t, err)
	require.Len(t, res.Columns, 1)
	assert.Equal(t, "note", res.Columns[0].Name)
}

// cachingScanClusters serves sessions whose definitions are cached until
// refreshed, as the Fluss adapter's metadata cache keeps them.
type cachingScanClusters struct {
	*scanClusters
	defs *cachedDefinitions
}

type cachingScanSession struct {
	scanSession
	defs *cachedDefinitions
}

func (s cachingScanSession) Tables() domain.TableDefinitions { return s.defs }

func (c cachingScanClusters) Session(ctx context.Context, cluster string, p domain.Principal) (domain.Session, error) {
	sess, err := c.scanClusters.Session(ctx, cluster, p)
	if err != nil {
		return nil, err
	}
	return cachingScanSession{sess.(scanSession), c.defs}, nil
}
