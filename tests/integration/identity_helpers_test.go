//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	gwboot "github.com/fluss-gateway/fluss-gateway-go/bootstrap"
	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/internal/testlog"
)

// aclCluster returns the addresses of the cluster with the authorizer on
// (tests/integration/acl-cluster.sh): FLUSS_ACL_BOOTSTRAP (plaintext) and
// FLUSS_ACL_SASL_BOOTSTRAP. The tests skip when they are unset.
func aclCluster(t *testing.T) (plain, sasl string) {
	t.Helper()
	plain, sasl = os.Getenv("FLUSS_ACL_BOOTSTRAP"), os.Getenv("FLUSS_ACL_SASL_BOOTSTRAP")
	if plain == "" || sasl == "" {
		t.Skip("FLUSS_ACL_BOOTSTRAP / FLUSS_ACL_SASL_BOOTSTRAP are not set; start the authorizer cluster with " +
			"tests/integration/acl-cluster.sh start")
	}
	return plain, sasl
}

// saslBootstrap is the shared cluster's SASL listener (FLUSS_SASL_BOOTSTRAP).
func saslBootstrap(t *testing.T) string {
	t.Helper()
	wrBootstrap(t) // skips (or fails when required) without a cluster
	addr := os.Getenv("FLUSS_SASL_BOOTSTRAP")
	if addr == "" {
		t.Skip("FLUSS_SASL_BOOTSTRAP is not set")
	}
	return addr
}

// secureGateway is a gateway started with explicit FLUSS_GATEWAY__* settings.
type secureGateway struct {
	t    *testing.T
	base string
	logs *testlog.Buffer
}

// startConfigured starts the whole gateway with env (FLUSS_GATEWAY__*
// variables over a loopback listener, no metrics) and stops it at cleanup.
func startConfigured(t *testing.T, env map[string]string) *secureGateway {
	t.Helper()
	all := map[string]string{
		"FLUSS_GATEWAY__REST__LISTEN":              "127.0.0.1:0",
		"FLUSS_GATEWAY__METRICS__ENABLED":          "false",
		"FLUSS_GATEWAY__SHUTDOWN__READINESS_GRACE": "0s",
	}
	for k, v := range env {
		all[k] = v
	}
	cfg, err := config.Load(config.Options{Env: all})
	require.NoError(t, err)
	logs := &testlog.Buffer{}
	base := runGateway(t, cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	return &secureGateway{t: t, base: base, logs: logs}
}

// startACLGateway starts a gateway on the authorizer cluster (its SASL
// listener sasl, cluster id `acl`) whose callers authenticate with tokens:
// Fluss sees the service account account (secret "<account>-secret", as
// acl-cluster.sh creates them), the caller the principal caller, whose
// Authorization header pair it returns (token "tok-<caller>-0123456789abcdef").
// extra are more FLUSS_GATEWAY__* settings.
func startACLGateway(t *testing.T, sasl, account, caller string, extra map[string]string) (*secureGateway, []string) {
	t.Helper()
	token := "tok-" + caller + "-0123456789abcdef"
	env := map[string]string{
		"FLUSS_GATEWAY__SECURITY__AUTHENTICATION":                   "token",
		"FLUSS_GATEWAY__SECURITY__TOKENS":                           token + ":" + caller,
		"FLUSS_GATEWAY__CLUSTERS":                                   "acl",
		"FLUSS_GATEWAY__CLUSTER__ACL__BOOTSTRAP__SERVERS":           sasl,
		"FLUSS_GATEWAY__CLUSTER__ACL__CONNECTION__SERVICE__ACCOUNT": account,
		"FLUSS_GATEWAY__CLUSTER__ACL__CONNECTION__SERVICE__SECRET":  account + "-secret",
	}
	for k, v := range extra {
		env[k] = v
	}
	return startConfigured(t, env), []string{"Authorization", "Bearer " + token}
}

// runGateway starts the whole gateway (bootstrap.New with cfg, log and the
// extra fx options), stops it at cleanup and returns the REST listener's
// URL (http://host:port).
func runGateway(t *testing.T, cfg *config.Config, log *slog.Logger, opts ...fx.Option) string {
	t.Helper()
	var rest *gwboot.RESTServer
	app := gwboot.New(cfg, log, append(opts, fx.Populate(&rest))...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, app.Start(ctx))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = app.Stop(ctx)
	})
	return "http://" + rest.Addr().String()
}

// call sends a request with an optional JSON body and header pairs and
// returns the status and the decoded body.
func (g *secureGateway) call(method, path string, body any, headers ...string) (int, map[string]any) {
	g.t.Helper()
	return httpJSON(g.t, method, g.base+path, body, headers...)
}

// httpJSON sends a request with an optional JSON body and header pairs and
// returns the status and the decoded JSON body (nil when empty).
func httpJSON(t *testing.T, method, url string, body any, headers ...string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	contentType := ""
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd, contentType = bytes.NewReader(b), "application/json"
	}
	status, raw := httpRaw(t, method, url, contentType, rd, headers...)
	if len(raw) == 0 {
		return status, nil
	}
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "body: %s", raw)
	return status, out
}

// httpRaw sends a request with an optional body of contentType ("": no
// Content-Type) and header pairs, and returns the status and the raw answer.
func httpRaw(t *testing.T, method, url, contentType string, body io.Reader, headers ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

// javaAdmin is a Java single-file program run with the official Java client
// as the super user admin over SASL: it grants ACLs and looks keys up, so
// that the ACL tests check the gateway against an independent client.
//
//	grant <user> <READ|WRITE|CREATE|DESCRIBE|...> cluster|db:<db>|table:<db>.<table>
//	lookup <db> <table> <int key>...   prints "key value" or "key null"
const javaAdmin = `
import java.util.List;
import org.apache.fluss.client.Connection;
import org.apache.fluss.client.ConnectionFactory;
import org.apache.fluss.client.admin.Admin;
import org.apache.fluss.client.lookup.Lookuper;
import org.apache.fluss.client.table.Table;
import org.apache.fluss.config.Configuration;
import org.apache.fluss.metadata.TablePath;
import org.apache.fluss.row.GenericRow;
import org.apache.fluss.row.InternalRow;
import org.apache.fluss.security.acl.AccessControlEntry;
import org.apache.fluss.security.acl.AclBinding;
import org.apache.fluss.security.acl.FlussPrincipal;
import org.apache.fluss.security.acl.OperationType;
import org.apache.fluss.security.acl.PermissionType;
import org.apache.fluss.security.acl.Resource;

public class FlussAdmin {
    public static void main(String[] args) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("bootstrap.servers", args[0]);
        conf.setString("client.security.protocol", "SASL");
        conf.setString("client.security.sasl.mechanism", "PLAIN");
        conf.setString("client.security.sasl.username", args[1]);
        conf.setString("client.security.sasl.password", args[2]);
        try (Connection c = ConnectionFactory.createConnection(conf)) {
            Admin admin = c.getAdmin();
            String cmd = args[3];
            if (cmd.equals("grant")) {
                String res = args[6];
                Resource r;
                if (res.equals("cluster")) r = Resource.cluster();
                else if (res.startsWith("db:")) r = Resource.database(res.substring(3));
                else {
                    String[] p = res.substring(6).split("\\.", 2);
                    r = Resource.table(p[0], p[1]);
                }
                admin.createAcls(List.of(new AclBinding(r, new AccessControlEntry(
                    new FlussPrincipal(args[4], "User"), AccessControlEntry.WILD_CARD_HOST,
                    OperationType.valueOf(args[5]), PermissionType.ALLOW)))).all().get();
                System.out.println("granted " + args[5] + " on " + res + " to " + args[4]);
            } else if (cmd.equals("lookup")) {
                try (Table t = c.getTable(TablePath.of(args[4], args[5]))) {
                    Lookuper l = t.newLookup().createLookuper();
                    for (int i = 6; i < args.length; i++) {
                        int k = Integer.parseInt(args[i]);
                        InternalRow row = l.lookup(GenericRow.of(k)).get().getSingletonRow();
                        System.out.println(k + " " + (row == null ? "null" : row.getString(1).toString()));
                    }
                }
            } else {
                throw new IllegalArgumentException("unknown command " + cmd);
            }
        }
    }
}
`

// runJavaAdmin runs javaAdmin against the SASL listener as admin.
func runJavaAdmin(t *testing.T, sasl string, args ...string) string {
	t.Helper()
	return runJava(t, "FlussAdmin.java", javaAdmin, 2*time.Minute, append([]string{sasl, "admin", "admin-secret"}, args...)...)
}
