package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/build"
	"github.com/factuarea/webhooks/internal/probe"
	"github.com/factuarea/webhooks/signature"
)

// probeSecretEnv is read when no --secret is given, so that the secret need
// not appear on a command line (shell history, ps).
const probeSecretEnv = "FACTUAREA_WEBHOOK_SECRET"

const probeUsage = `Usage: webhooks probe --url URL --secret whsec_… [flags]

Tests a webhook receiver from outside, as the sender reaches it:
  duplicate  one event delivered --repeat times at once, each correctly signed:
             all must answer 2xx; then check that the effect happened once
  signature  an event signed with another secret: must not answer 2xx
  stale      a correct signature an hour old: must not answer 2xx
  body       a correctly signed body that is not JSON: must not answer 2xx (400)
  latency    time to answer: a warning past --slow, a failure past --timeout
With --standard-webhooks, every request also carries the Standard Webhooks
headers (webhook-id, webhook-timestamp, webhook-signature), as an endpoint with
standard_webhooks on receives them; signature and stale corrupt or age both.
The command fails (exit status 1) if any probe failed.

Flags:
`

// ProbeCommand is `webhooks probe`: it tests a receiver from outside.
type ProbeCommand struct{ Out io.Writer }

// Run parses args (flag.NewFlagSet("probe", flag.ContinueOnError)) and runs the probes; it returns an error (non-zero exit) if any probe failed.
func (c *ProbeCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("probe", flag.ContinueOnError)
	fs.SetOutput(c.Out)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), probeUsage)
		fs.PrintDefaults()
	}
	var secrets secretsFlag
	url := fs.String("url", "", "the receiver's endpoint `URL`, http or https (required)")
	fs.Var(&secrets, "secret", "the endpoint's signing `secret` (whsec_…); give it twice during a rotation, new first (default $"+probeSecretEnv+")")
	timeout := fs.Duration("timeout", probe.DefaultTimeout, "the sender's attempt timeout: an answer later than this fails")
	slow := fs.Duration("slow", probe.DefaultSlowAfter, "warn when an answer takes longer than this")
	repeat := fs.Int("repeat", probe.DefaultRepeat, "how many copies of one event to deliver at once")
	account := fs.String("account", "", "send the account endpoint's envelope for this account `id` (default: the company endpoint's)")
	apiVersion := fs.String("api-version", webhooks.LatestAPIVersion, "the payload `version` the endpoint is pinned to: "+strings.Join(webhooks.APIVersions(), " or "))
	livemode := fs.Bool("livemode", true, "the events' livemode")
	standard := fs.Bool("standard-webhooks", false, "also send the Standard Webhooks headers, as to an endpoint with standard_webhooks on (the secret must be standard base64 after whsec_)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("probe: unexpected argument %q (flags only; see webhooks probe -h)", fs.Arg(0))
	}
	if *url == "" {
		return errors.New("probe: --url is required: the receiver's endpoint URL, such as --url https://example.com/factuarea/webhook")
	}
	if len(secrets) == 0 {
		if s := os.Getenv(probeSecretEnv); s != "" {
			secrets = append(secrets, s)
		}
	}
	if len(secrets) == 0 {
		return errors.New("probe: --secret is required: the endpoint's signing secret (whsec_…), or set " + probeSecretEnv)
	}
	if *timeout <= 0 || *slow <= 0 || *repeat <= 0 {
		return errors.New("probe: --timeout, --slow and --repeat must be positive")
	}
	_, err := probe.Run(ctx, probe.Config{
		URL:              *url,
		Secrets:          secrets,
		Timeout:          *timeout,
		SlowAfter:        *slow,
		Repeat:           *repeat,
		AccountID:        *account,
		APIVersion:       *apiVersion,
		TestMode:         !*livemode,
		StandardWebhooks: *standard,
		UserAgent:        "Factuarea-Webhooks-Probe/" + build.Version(),
	}, c.Out)
	if errors.Is(err, signature.ErrSecretNotStandard) {
		return fmt.Errorf("%w (or probe without --standard-webhooks)", err)
	}
	return err
}

// secretsFlag collects the repeated --secret flag.
type secretsFlag []string

func (s *secretsFlag) String() string {
	// Never print a secret, not even as a default in the usage.
	return strings.Repeat("whsec_…,", len(*s))
}

func (s *secretsFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty secret")
	}
	*s = append(*s, v)
	return nil
}
