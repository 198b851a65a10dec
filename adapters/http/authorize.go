package http

import (
	"context"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// Authorizer is the gateway-side authorization policy
// (application.Policy): nil error when principal may do op on the database
// (and table, "" for database-level requests) of cluster.
type Authorizer interface {
	Authorize(principal domain.Principal, cluster string, op application.Operation, database, table string) error
}

// routeAccess is what a route does, for the policy and the audit log: its
// operation, whether it acts on a table (else on a database, or on the
// cluster's list of databases) and whether it is DDL (audited).
type routeAccess struct {
	op    application.Operation
	table bool
	ddl   bool
	// named: the route creates what its body names (createDatabase,
	// createTable); the policy checks that name.
	named bool
}

// accessByOperation maps every authenticated operation id of allRoutes to
// its access; routes absent from it (the probes, the OpenAPI document,
// listClusters) need no permission. createDatabase and createTable name
// what they create in the body: the policy checks that name.
var accessByOperation = map[string]routeAccess{
	"listDatabases":       {op: application.OpRead},
	"createDatabase":      {op: application.OpDDL, ddl: true, named: true},
	"getDatabase":         {op: application.OpRead},
	"databaseExists":      {op: application.OpRead},
	"dropDatabase":        {op: application.OpDrop, ddl: true},
	"listTables":          {op: application.OpRead},
	"createTable":         {op: application.OpDDL, table: true, ddl: true, named: true},
	"describeTable":       {op: application.OpRead, table: true},
	"tableExists":         {op: application.OpRead, table: true},
	"alterTable":          {op: application.OpDDL, table: true, ddl: true},
	"dropTable":           {op: application.OpDrop, table: true, ddl: true},
	"listPartitions":      {op: application.OpRead, table: true},
	"createPartition":     {op: application.OpDDL, table: true, ddl: true},
	"dropPartition":       {op: application.OpDrop, table: true, ddl: true},
	"writeRecords":        {op: application.OpWrite, table: true},
	"lookupRecords":       {op: application.OpRead, table: true},
	"prefixLookupRecords": {op: application.OpRead, table: true},
	"scanRecords":         {op: application.OpRead, table: true},
	"listOffsets":         {op: application.OpRead, table: true},
}

// openOperations are the authenticated routes that need no permission
// (every other one must be in accessByOperation: TestEveryRouteIsClassified).
var openOperations = map[string]bool{"listClusters": true}

// authorize runs after authentication: it records DDL requests in the
// audit log (whatever their outcome) and refuses, with 403 `unauthorized`
// and an audit line, the requests the policy does not allow.
func (a *api) authorize(r routeSpec) fiber.Handler {
	access, ok := accessByOperation[r.operationID]
	if !ok || (a.opts.Authorizer == nil && !access.ddl) {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	return func(c *fiber.Ctx) (err error) {
		if access.ddl {
			defer func() { a.auditAccess(c, r, "ddl", err) }()
		}
		if a.opts.Authorizer == nil {
			return c.Next()
		}
		p, _ := c.Locals(localPrincipal).(domain.Principal)
		cluster, _ := pathParam(c, "cluster")
		database, _ := pathParam(c, "database")
		table := ""
		if access.table {
			table, _ = pathParam(c, "table")
		}
		if access.named {
			// The body is decoded again by the handler; catalog bodies are
			// small (gateway.rest.metadata.max-request-bytes).
			if r.operationID == "createDatabase" {
				var req createDatabaseRequest
				if err := a.decodeBody(c, &req); err != nil {
					return err
				}
				database = req.Database
			} else {
				var req createTableRequest
				if err := a.decodeBody(c, &req); err != nil {
					return err
				}
				table = req.TableName
			}
		}
		if err := a.opts.Authorizer.Authorize(p, cluster, access.op, database, table); err != nil {
			if !access.ddl {
				a.auditAccess(c, r, "denied", err)
			}
			return err
		}
		return c.Next()
	}
}

// auditAccess writes the audit record of a DDL or denied request: who
// (principal, method, act-as target, groups), the route, its path and
// query string (cut short), and the outcome (status, error code).
func (a *api) auditAccess(c *fiber.Ctx, r routeSpec, event string, err error) {
	status, code := c.Response().StatusCode(), ""
	if err != nil {
		status, code, _, _, _ = classify(c, err, a.opts.MaxRequestBytes)
		if domain.KindOf(err) == domain.KindUnauthorized && event == "ddl" {
			event = "ddl_denied"
		}
	}
	attrs := []slog.Attr{
		slog.String("event", event),
		slog.String("request_id", requestID(c)),
	}
	if p, ok := c.Locals(localPrincipal).(domain.Principal); ok {
		attrs = append(attrs, slog.String("principal", principalName(p)), slog.String("auth_method", p.Method),
			slog.String("act_as", p.ActAs), slog.Any("groups", p.Groups))
	}
	attrs = append(attrs,
		slog.String("method", c.Method()),
		slog.String("route", r.path),
		slog.String("operation", r.operationID),
		slog.String("path", quoteLog(c.Path())),
		slog.String("query", quoteLog(string(c.Request().URI().QueryString()))),
		slog.Int("status", status),
	)
	if code != "" {
		attrs = append(attrs, slog.String("error_code", code))
	}
	ctx := c.UserContext()
	if ctx == nil {
		ctx = context.Background()
	}
	a.audit.LogAttrs(ctx, slog.LevelInfo, AuditMessage, attrs...)
}

// quoteLog cuts user input written to a log line.
func quoteLog(s string) string {
	const keep = 512
	if len(s) > keep {
		return s[:keep] + "…"
	}
	return s
}
