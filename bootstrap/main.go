package bootstrap

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fluss-gateway/fluss-gateway-go/bootstrap/config"
	"github.com/fluss-gateway/fluss-gateway-go/internal/logwriter"
)

// Exit codes of Main.
const (
	ExitOK     = 0
	ExitFailed = 1 // startup or shutdown failed
	ExitUsage  = 2 // bad flags or configuration
)

// Main runs the gateway process: it parses the flags, loads and validates the
// configuration, starts every module, waits for SIGINT or SIGTERM and drains.
// It returns the process exit code.
//
//	--config PATH         YAML configuration (else $FLUSS_GATEWAY_CONFIG)
//	--bind-address ADDR   overrides gateway.rest.listen
//	--log-level LEVEL     debug, info (default), warn or error
//	--print-config        print the effective configuration, credentials redacted, and exit
func Main(args []string, environ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fluss-gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "path of the YAML configuration file (default $"+config.ConfigPathEnv+")")
	bindAddress := fs.String("bind-address", "", "override gateway.rest.listen, for example 127.0.0.1:8080")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	printConfig := fs.Bool("print-config", false, "print the effective configuration with credentials redacted and exit")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fluss-gateway: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return ExitUsage
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "fluss-gateway: --log-level: %v\n", err)
		return ExitUsage
	}

	env := config.EnvMap(environ)
	cfg, err := config.Load(config.Options{
		Path:        config.ResolvePath(*configPath, env),
		Env:         env,
		BindAddress: *bindAddress,
	})
	if err != nil {
		fmt.Fprintf(stderr, "fluss-gateway: %v\n", err)
		return ExitUsage
	}
	if *printConfig {
		fmt.Fprint(stdout, cfg.Redacted())
		return ExitOK
	}

	log, logOut := processLogger(stderr, level)
	defer func() { _ = logOut.Close() }() // the last lines, then Main returns
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	log.Debug("effective configuration", "config", cfg.Redacted())
	// The process's memory limit (GOMEMLIMIT from the cgroup), set here
	// rather than in the fx graph so that tests assembling the gateway
	// in-process keep their own.
	setProcessMemoryLimit(cfg, log)

	app := New(cfg, log)
	if err := app.Err(); err != nil {
		log.Error("cannot assemble the gateway", "error", err)
		return ExitFailed
	}
	startCtx, cancelStart := context.WithTimeout(context.Background(), app.StartTimeout())
	defer cancelStart()
	if err := app.Start(startCtx); err != nil {
		log.Error("fluss-gateway failed to start", "error", err)
		return ExitFailed
	}
	log.Info("fluss-gateway started", "version", Version, "commit", Commit, "clusters", cfg.ClusterIDs())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	select {
	case s := <-sig:
		log.Info("shutdown signal received", "signal", s.String())
	case s := <-app.Done():
		log.Info("shutdown requested", "signal", s.String())
	}

	stopCtx, cancelStop := context.WithTimeout(context.Background(), app.StopTimeout())
	defer cancelStop()
	if err := app.Stop(stopCtx); err != nil {
		log.Error("fluss-gateway stopped with errors", "error", err)
		return ExitFailed
	}
	log.Info("fluss-gateway stopped")
	return ExitOK
}

// processLogger is the gateway's logger: JSON lines on stderr, written by
// a goroutine of their own (internal/logwriter), so that no log call, and
// so no answer waiting for its access line, waits for a write to stderr
// (issue 28). Closing the writer flushes what is queued.
func processLogger(stderr io.Writer, level slog.Level) (*slog.Logger, *logwriter.Writer) {
	out := logwriter.New(stderr, logwriter.DefaultDepth)
	return slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level})), out
}
