// Command webhooks runs the Factuarea webhook delivery service and its tools.
//
//	webhooks serve   run the API, the portal and the delivery workers
//	webhooks bench   measure registration and delivery throughput
//	webhooks probe   test a webhook receiver from outside
//	webhooks listen  print what a receiver gets, or relay deliveries to localhost (--forward-to)
//	webhooks version print the version and the revision it was built from
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/factuarea/webhooks/internal/build"
)

const usage = `Usage: webhooks <command> [flags]

Commands:
  serve   run the API, the portal and the delivery workers
  bench   measure registration and delivery throughput
  probe   test a webhook receiver from outside
  listen  a receiver that prints what it gets; with --forward-to, the local relay
  version print the version and the revision it was built from (also --version)

Run "webhooks <command> -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "webhooks:", err)
		os.Exit(1)
	}
}

// run dispatches to a subcommand; tests call it as the program.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "serve":
		return (&ServeCommand{Out: stdout, Stderr: stderr, LimitMemory: true}).Run(ctx, args[1:])
	case "bench":
		return (&BenchCommand{Out: stdout, Stderr: stderr}).Run(ctx, args[1:])
	case "listen":
		return (&ListenCommand{Out: stdout, Stderr: stderr}).Run(ctx, args[1:])
	case "probe":
		return (&ProbeCommand{Out: stdout}).Run(ctx, args[1:])
	case "version", "-version", "--version":
		info, ok := build.Info()
		writeVersion(stdout, info, ok)
		return nil
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}
