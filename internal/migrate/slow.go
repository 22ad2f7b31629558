package migrate

import (
	"log/slog"
	"sync"
	"time"
)

// slowAfter is how long a migration runs before the log says so.
var slowAfter = 2 * time.Second

// LogSlow logs, once a migration has run for slowAfter, that it is being
// applied, and when it ends, how long it took: a migration that rewrites
// a large table takes minutes, and the service answers nothing meanwhile.
// A fresh database's migrations, which take milliseconds, log nothing.
// Call the function it returns when the migration ends.
func LogSlow(log *slog.Logger, store, name string) (done func()) {
	start := time.Now()
	var mu sync.Mutex
	slow := false
	t := time.AfterFunc(slowAfter, func() {
		mu.Lock()
		defer mu.Unlock()
		slow = true
		log.Info(store+": applying a migration; on a large database this takes minutes, and the service answers once it is done", "migration", name)
	})
	return func() {
		t.Stop()
		mu.Lock()
		defer mu.Unlock()
		if slow {
			log.Info(store+": migration ended", "migration", name, "duration", time.Since(start).Round(time.Millisecond))
		}
	}
}
