package http

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

type healthResponse struct {
	Status   string `json:"status"`
	UptimeMS int64  `json:"uptime_ms"`
}

type readyResponse struct {
	Status string `json:"status"`
}

// health is liveness: 200 while the process answers, draining included.
func (a *api) health(c *fiber.Ctx) error {
	return writeJSONBody(c, healthResponse{Status: "ok", UptimeMS: time.Since(a.started).Milliseconds()})
}

// ready is 200 only between startup and the start of shutdown, so load
// balancers stop routing as soon as shutdown begins (the readiness grace
// keeps serving application requests meanwhile). It answers 503
// `unavailable` with Retry-After otherwise. It reflects the process
// lifecycle only: cluster availability surfaces through request errors.
func (a *api) ready(c *fiber.Ctx) error {
	if err := a.readiness.ensureReady(); err != nil {
		return err
	}
	return writeJSONBody(c, readyResponse{Status: "ready"})
}

func (a *api) openAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Send(a.openapi)
}

func (a *api) listClusters(c *fiber.Ctx) error {
	if _, err := a.principal(c); err != nil {
		return err
	}
	ids := slices.Clone(a.catalog.Clusters())
	slices.Sort(ids)
	return writeJSONBody(c, clusterListResponse{Clusters: nonNilSlice(ids)})
}

func (a *api) listDatabases(c *fiber.Ctx) error {
	scope, err := a.scope(c)
	if err != nil {
		return err
	}
	page, err := pageRequest(c)
	if err != nil {
		return err
	}
	res, err := a.catalog.ListDatabases(c.UserContext(), scope, page)
	if err != nil {
		return err
	}
	return writeJSONBody(c, databaseListResponse{Databases: nonNilSlice(res.Items), NextPageToken: res.NextPageToken})
}

func (a *api) createDatabase(c *fiber.Ctx) error {
	scope, err := a.scope(c)
	if err != nil {
		return err
	}
	var req createDatabaseRequest
	if err := a.decodeBody(c, &req); err != nil {
		return err
	}
	info, created, err := a.catalog.CreateDatabase(c.UserContext(), scope, application.CreateDatabase{
		Name:           req.Database,
		Descriptor:     domain.DatabaseDescriptor{Comment: req.Comment, CustomProperties: req.CustomProperties},
		IgnoreIfExists: req.IgnoreIfExists,
	})
	if err != nil {
		return err
	}
	return writeCreated(c, created, resourcePath(pathDatabase, scope.Cluster, info.Name), databaseCreatedResponse{Database: info.Name})
}

func (a *api) getDatabase(c *fiber.Ctx) error {
	scope, db, err := a.databaseScope(c)
	if err != nil {
		return err
	}
	info, err := a.catalog.GetDatabase(c.UserContext(), scope, db)
	if err != nil {
		return err
	}
	return writeJSONBody(c, newDatabaseResponse(info))
}

func (a *api) databaseExists(c *fiber.Ctx) error {
	scope, db, err := a.databaseScope(c)
	if err != nil {
		return err
	}
	ok, err := a.catalog.DatabaseExists(c.UserContext(), scope, db)
	if err != nil {
		return err
	}
	return existence(c, ok, domain.ResourceDatabase, "database `%s` does not exist", db)
}

func (a *api) dropDatabase(c *fiber.Ctx) error {
	scope, db, err := a.databaseScope(c)
	if err != nil {
		return err
	}
	ignore, err := queryBool(c, "ignore_if_not_exists")
	if err != nil {
		return err
	}
	cascade, err := queryBool(c, "cascade")
	if err != nil {
		return err
	}
	if err := a.catalog.DropDatabase(c.UserContext(), scope, application.DropDatabase{Name: db, IgnoreIfNotExists: ignore, Cascade: cascade}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (a *api) listTables(c *fiber.Ctx) error {
	scope, db, err := a.databaseScope(c)
	if err != nil {
		return err
	}
	page, err := pageRequest(c)
	if err != nil {
		return err
	}
	res, err := a.catalog.ListTables(c.UserContext(), scope, db, page)
	if err != nil {
		return err
	}
	return writeJSONBody(c, tableListResponse{Tables: nonNilSlice(res.Items), NextPageToken: res.NextPageToken})
}

func (a *api) createTable(c *fiber.Ctx) error {
	scope, db, err := a.databaseScope(c)
	if err != nil {
		return err
	}
	var req createTableRequest
	if err := a.decodeBody(c, &req); err != nil {
		return err
	}
	cmd, err := req.toCommand(db)
	if err != nil {
		return err
	}
	info, created, err := a.catalog.CreateTable(c.UserContext(), scope, cmd)
	if err != nil {
		return err
	}
	if cmd.ValidateOnly {
		return writeJSONBody(c, newValidateOnlyResponse(cmd.Path, info.Descriptor))
	}
	// The official answer is 201 with an empty body and the Location to GET.
	c.Set(fiber.HeaderLocation, resourcePath(pathTable, scope.Cluster, db, info.Path.Table))
	c.Status(fiber.StatusCreated)
	if !created {
		// Extension (ignore_if_exists): the table existed, nothing was created.
		c.Status(fiber.StatusNoContent)
	}
	c.Response().ResetBody()
	return nil
}

func (a *api) getTable(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	info, err := a.catalog.GetTable(c.UserContext(), scope, path)
	if err != nil {
		return err
	}
	return writeJSONBody(c, newTableResponse(info))
}

func (a *api) tableExists(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	ok, err := a.catalog.TableExists(c.UserContext(), scope, path)
	if err != nil {
		return err
	}
	return existence(c, ok, domain.ResourceTable, "table `%s` does not exist", path)
}

func (a *api) alterTable(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	var req alterTableRequest
	if err := a.decodeBody(c, &req); err != nil {
		return err
	}
	changes, err := req.toChanges()
	if err != nil {
		return err
	}
	if _, _, err := a.catalog.AlterTable(c.UserContext(), scope, application.AlterTable{Path: path, Changes: changes, IgnoreIfNotExists: req.IgnoreIfNotExists}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (a *api) dropTable(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	ignore, err := queryBool(c, "ignore_if_not_exists")
	if err != nil {
		return err
	}
	if err := a.catalog.DropTable(c.UserContext(), scope, path, ignore); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (a *api) listPartitions(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	page, err := pageRequest(c)
	if err != nil {
		return err
	}
	res, err := a.catalog.ListPartitions(c.UserContext(), scope, path, page)
	if err != nil {
		return err
	}
	out := partitionListResponse{Partitions: make([]partitionEntry, len(res.Items)), NextPageToken: res.NextPageToken}
	for i, p := range res.Items {
		out.Partitions[i] = newPartitionEntry(p)
	}
	return writeJSONBody(c, out)
}

func (a *api) createPartition(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	var req createPartitionRequest
	if err := a.decodeBody(c, &req); err != nil {
		return err
	}
	spec, err := specOf(req.Partition)
	if err != nil {
		return err
	}
	info, created, err := a.catalog.CreatePartition(c.UserContext(), scope, application.CreatePartition{Path: path, Spec: spec, IgnoreIfExists: req.IgnoreIfExists})
	if err != nil {
		return err
	}
	return writeCreated(c, created, resourcePath(pathPartition, scope.Cluster, path.Database, path.Table, info.Name), newPartitionResponse(path, info))
}

func (a *api) dropPartition(c *fiber.Ctx) error {
	scope, path, err := a.tableScope(c)
	if err != nil {
		return err
	}
	name, err := pathParam(c, "partition")
	if err != nil {
		return err
	}
	ignore, err := queryBool(c, "ignore_if_not_exists")
	if err != nil {
		return err
	}
	if err := a.catalog.DropPartition(c.UserContext(), scope, application.DropPartition{Path: path, Name: name, IgnoreIfNotExists: ignore}); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (a *api) scope(c *fiber.Ctx) (application.Scope, error) {
	cluster, err := pathParam(c, "cluster")
	if err != nil {
		return application.Scope{}, err
	}
	p, err := a.principal(c)
	if err != nil {
		return application.Scope{}, err
	}
	return application.Scope{Cluster: cluster, Principal: p}, nil
}

func (a *api) databaseScope(c *fiber.Ctx) (application.Scope, string, error) {
	scope, err := a.scope(c)
	if err != nil {
		return application.Scope{}, "", err
	}
	db, err := pathParam(c, "database")
	return scope, db, err
}

func (a *api) tableScope(c *fiber.Ctx) (application.Scope, domain.TablePath, error) {
	scope, db, err := a.databaseScope(c)
	if err != nil {
		return application.Scope{}, domain.TablePath{}, err
	}
	table, err := pathParam(c, "table")
	return scope, domain.TablePath{Database: db, Table: table}, err
}

// pathParam returns a percent-decoded path segment. Segments are decoded
// here rather than by the router, so that an encoded '/' cannot change the
// route and a partition name may carry an encoded '$' (%24).
func pathParam(c *fiber.Ctx, name string) (string, error) {
	v, err := url.PathUnescape(c.Params(name))
	if err != nil {
		return "", domain.InvalidArgument("{%s}: invalid percent-encoding in the path segment", name)
	}
	return v, nil
}

// checkQuery rejects query parameters the operation does not define and
// repeated ones.
func checkQuery(allowed []string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		args := c.Request().URI().QueryArgs()
		if args.Len() == 0 {
			return c.Next() // the common case, without the map and the iterator
		}
		seen := map[string]bool{}
		for k := range args.All() {
			key := string(k)
			switch {
			case !contains(allowed, key):
				return domain.InvalidArgument("unknown query parameter %q", key)
			case seen[key]:
				return domain.InvalidArgument("%s: query parameter given more than once", key)
			}
			seen[key] = true
		}
		return c.Next()
	}
}

func queryBool(c *fiber.Ctx, name string) (bool, error) {
	args := c.Request().URI().QueryArgs()
	if !args.Has(name) {
		return false, nil
	}
	switch string(args.Peek(name)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, domain.InvalidArgument("%s: expected true or false", name)
}

func pageRequest(c *fiber.Ctx) (application.PageRequest, error) {
	args := c.Request().URI().QueryArgs()
	var page application.PageRequest
	if args.Has("max_results") {
		n, err := strconv.Atoi(string(args.Peek("max_results")))
		if err != nil || n < 1 || n > application.MaxPageSize {
			return page, domain.InvalidArgument("max_results: expected an integer between 1 and %d", application.MaxPageSize)
		}
		page.MaxResults = n
	}
	if args.Has("page_token") {
		page.PageToken = string(args.Peek("page_token"))
		if page.PageToken == "" {
			return page, domain.InvalidArgument("page_token: must not be empty; omit it for the first page")
		}
	}
	return page, nil
}

// existence answers a HEAD: 200 when the resource exists, else the
// resource-specific 404 (whose envelope HEAD does not transmit).
func existence(c *fiber.Ctx, ok bool, res domain.Resource, format string, arg any) error {
	if !ok {
		return domain.NotFound(res, format, arg)
	}
	// A HEAD answer carries the headers of the GET answer and no body (the
	// resource's JSON is not fetched for an existence check).
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Status(fiber.StatusOK)
	c.Response().ResetBody()
	return nil
}

// writeCreated answers 201 with a Location for a created resource, or 200
// when the resource already existed and the request said to ignore that.
func writeCreated(c *fiber.Ctx, created bool, location string, body any) error {
	c.Set(fiber.HeaderLocation, location)
	if created {
		c.Status(fiber.StatusCreated)
	}
	return writeJSONBody(c, body)
}

// resourcePath fills a path template's parameters in order, escaping each.
func resourcePath(template string, values ...string) string {
	segs := strings.Split(template, "/")
	next := 0
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && next < len(values) {
			segs[i] = url.PathEscape(values[next])
			next++
		}
	}
	return strings.Join(segs, "/")
}
