package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/factuarea/webhooks/internal/service"
)

// cluster is a set of `webhooks serve` processes on one database.
type cluster struct {
	procs []*exec.Cmd
	urls  []string
	key   string
	dir   string // the SQLite file's folder, removed at stop
}

var servingAddr = regexp.MustCompile(`msg="webhooks: serving" addr=(\S+)`)

// startCluster starts cfg.Processes serve processes on cfg.Database.
func startCluster(ctx context.Context, cfg Config) (*cluster, error) {
	c := &cluster{}
	db := cfg.Database
	switch {
	case db == "" && cfg.Processes == 1:
		dir, err := os.MkdirTemp("", "webhooks-bench-")
		if err != nil {
			return nil, err
		}
		c.dir, db = dir, filepath.Join(dir, "webhooks.db")
	case !service.IsPostgres(db):
		return nil, fmt.Errorf("several processes need a PostgreSQL database")
	}
	exe := cfg.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	c.key = adminKey(cfg)
	for range cfg.Processes {
		cmd := exec.CommandContext(ctx, exe, "serve")
		cmd.Env = append(os.Environ(), "WEBHOOKS_DATABASE="+db, "WEBHOOKS_ADMIN_KEY="+c.key,
			"WEBHOOKS_ADDR=127.0.0.1:0", "WEBHOOKS_ALLOW_NETWORKS=127.0.0.0/8,::1/128", "WEBHOOKS_ALLOW_HTTP=true",
			"WEBHOOKS_LOG_LEVEL=info")
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		stderr, err := cmd.StderrPipe()
		if err != nil {
			c.stop()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			c.stop()
			return nil, err
		}
		c.procs = append(c.procs, cmd)
		addr := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if m := servingAddr.FindStringSubmatch(sc.Text()); m != nil {
					addr <- m[1]
				}
				if cfg.Logger != nil && (strings.Contains(sc.Text(), "level=WARN") || strings.Contains(sc.Text(), "level=ERROR")) {
					cfg.Logger.Warn("bench: serve: " + sc.Text())
				}
			}
		}()
		select {
		case a := <-addr:
			c.urls = append(c.urls, "http://"+a)
		case <-time.After(30 * time.Second):
			c.stop()
			return nil, fmt.Errorf("serve process did not start")
		}
	}
	return c, nil
}

// peakRSS sums the processes' peak resident set sizes (VmHWM is the peak
// over a process's life, so reading it at the end is enough).
func (c *cluster) peakRSS() int64 {
	var sum int64
	for _, p := range c.procs {
		sum += vmHWM(strconv.Itoa(p.Process.Pid))
	}
	return sum
}

// cpu sums the processes' CPU time so far.
func (c *cluster) cpu() time.Duration {
	var sum time.Duration
	for _, p := range c.procs {
		sum += procCPU(p.Process.Pid)
	}
	return sum
}

// stop ends the processes with SIGTERM, as an operator would.
func (c *cluster) stop() {
	for _, p := range c.procs {
		p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range c.procs {
		p.Wait()
	}
	if c.dir != "" {
		os.RemoveAll(c.dir)
	}
}
