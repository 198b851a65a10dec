package http

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/gofiber/fiber/v2"

	"github.com/fluss-gateway/fluss-gateway-go/application"
	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// localWriteSummary holds the application.WriteSummary of a write that got
// per-entry verdicts, for the audit line.
const localWriteSummary = "fluss-gateway.write-summary"

// AuditMessage is the message of every audit record; AuditLoggerName is
// the value of its `logger` attribute when Options.AuditLogger is unset.
const (
	AuditMessage    = "audit"
	AuditLoggerName = "audit"
)

// auditWrite writes one structured audit record per write request, at info
// level on the audit logger, whatever its outcome: who (principal,
// authentication method, act-as target), where (cluster, table), the
// request id, the HTTP status and error code, and the entries' verdicts
// (succeeded, failed, failed with an unknown outcome, failures by code).
// Unauthenticated attempts are recorded too, without a principal. No
// credential and no row data is ever part of it.
func (a *api) auditWrite(c *fiber.Ctx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			a.writeAudit(c, fmt.Errorf("panic: %v", p))
			panic(p)
		}
		a.writeAudit(c, err)
	}()
	return c.Next()
}

func (a *api) writeAudit(c *fiber.Ctx, err error) {
	status, code := c.Response().StatusCode(), ""
	if err != nil {
		status, code, _, _, _ = classify(c, err, a.opts.MaxRequestBytes)
	}
	cluster, _ := pathParam(c, "cluster")
	database, _ := pathParam(c, "database")
	table, _ := pathParam(c, "table")
	attrs := []slog.Attr{
		slog.String("event", "write"),
		slog.String("request_id", requestID(c)),
	}
	if p, ok := c.Locals(localPrincipal).(domain.Principal); ok {
		attrs = append(attrs, slog.Bool("authenticated", true), slog.String("principal", principalName(p)),
			slog.String("auth_method", p.Method), slog.String("act_as", p.ActAs))
	} else {
		attrs = append(attrs, slog.Bool("authenticated", false))
	}
	attrs = append(attrs,
		slog.String("cluster", cluster),
		slog.String("table", domain.TablePath{Database: database, Table: table}.String()),
		slog.Int("status", status),
	)
	if code != "" {
		attrs = append(attrs, slog.String("error_code", code))
	}
	if sum, ok := c.Locals(localWriteSummary).(application.WriteSummary); ok {
		byCode := make([]any, 0, len(sum.FailedByCode))
		for _, k := range slices.Sorted(maps.Keys(sum.FailedByCode)) {
			byCode = append(byCode, slog.Int(k, sum.FailedByCode[k]))
		}
		attrs = append(attrs,
			slog.Int("entries", sum.Rows),
			slog.Int("succeeded", sum.Succeeded),
			slog.Int("failed", sum.Failed),
			slog.Int("applied_unknown", sum.AppliedUnknown),
			slog.Group("failed_by_code", byCode...),
		)
	}
	ctx := c.UserContext()
	if ctx == nil {
		ctx = context.Background()
	}
	a.audit.LogAttrs(ctx, slog.LevelInfo, AuditMessage, attrs...)
}
