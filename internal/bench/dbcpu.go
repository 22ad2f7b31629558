package bench

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/factuarea/webhooks/internal/service"
)

// measuresPostgres says the run's database is a PostgreSQL of this
// machine's that the bench's own serve processes use, whose CPU
// postgresCPU then counts.
func (cfg Config) measuresPostgres() bool {
	return service.IsPostgres(cfg.Database) && cfg.URL == ""
}

// postgresCPU is the CPU time so far of every process of this machine
// named postgres (its backends and its background workers), on Linux; 0
// when there is none. A database's work on the bench's behalf runs there,
// not in the serve processes, and with several processes it grows with
// their transactions and wake-ups rather than with the deliveries: the
// figure that says whether a cluster costs what one process does is the
// sum of both. Other clients of the same server on the machine count too,
// so it is measured on a machine that runs nothing else.
func postgresCPU() time.Duration {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		stat := string(b)
		open, close := strings.IndexByte(stat, '('), strings.LastIndex(stat, ") ")
		if open < 0 || close < open || stat[open+1:close] != "postgres" {
			continue
		}
		total += statCPU(stat)
	}
	return total
}
