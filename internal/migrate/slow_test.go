package migrate

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log's output, read while the log may write.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestLogSlow(t *testing.T) {
	defer func(d time.Duration) { slowAfter = d }(slowAfter)
	var out lockedBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))

	LogSlow(log, "sqlite", "migration/0001_init.sql")()
	if s := out.String(); s != "" {
		t.Errorf("a quick migration logged %q", s)
	}

	slowAfter = time.Millisecond
	done := LogSlow(log, "sqlite", "migration/0017_binary_ids.sql")
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "applying a migration"); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a slow migration: nothing logged while it runs")
		}
	}
	done()
	if s := out.String(); !strings.Contains(s, "migration ended") || !strings.Contains(s, "0017_binary_ids.sql") {
		t.Errorf("a slow migration logged %q, want when it started and when it ended", s)
	}
}
