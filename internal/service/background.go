package service

import (
	"cmp"
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/maintenance"
	"github.com/factuarea/webhooks/internal/postgres"
)

// Defaults of the background services' intervals.
const (
	DefaultRetention      = 90 * 24 * time.Hour
	DefaultPurgeInterval  = 10 * time.Minute
	DefaultOutboxInterval = time.Second
	DefaultKeysRefresh    = 5 * time.Second
	DefaultEraseInterval  = 5 * time.Second
	DefaultScrubInterval  = 30 * time.Second
	// notifyGap is the least time between two NOTIFYs of one process: the
	// notifications of the commits in between share one.
	notifyGap = 5 * time.Millisecond
	// purgeBatch bounds one purge transaction, so that it holds its locks
	// for milliseconds, not minutes; outboxBatch one drain's.
	purgeBatch  = 500
	outboxBatch = 100
	probeBatch  = 100
	// erasePause is how many times a chunk's duration the erasure pauses
	// after it (2 gave a p99 of 63 ms to deliveries at 1,036/s during the
	// erasure of 200,000 events, 4 one of 19 ms at 523/s: docs/performance.md).
	erasePause = 4
)

// background returns the service's background work, each job a service
// of its own (see maintenance):
//
//   - outbox: registers the operational events and makes the disables the
//     outbox holds, as soon as a transaction stores an entry, and every
//     OutboxInterval unasked (what a process that died left);
//   - purge: every PurgeInterval, deletes what is older than Retention;
//   - backlog: every BacklogInterval, raises and clears the backlog
//     alerts;
//   - recovery: every RecoveryInterval, sends the probes of automatic
//     recovery that are due;
//   - erase: works through the erasure jobs of deleted companies and
//     accounts, a short transaction per chunk of events, as soon as a
//     deletion stores one and every EraseInterval unasked (what a
//     process that died left);
//   - scrub: every ScrubInterval, once something was erased or purged,
//     makes the bytes leave the disk (SPEC 19);
//   - with a database that several processes share: notify (one NOTIFY
//     for the due work of the commits of the last few milliseconds that
//     this process has no room for), listen (wakes the engine for the
//     others'), keys (follows a rotation of the admin key every
//     KeysRefresh), and, on PostgreSQL, vacuum (the work queue every few
//     seconds) and processes (counts the processes on the schema every
//     ProcessesInterval: the windows of group commit grow with them).
func (s *Service) background() []maintenance.Service {
	services := []maintenance.Service{
		s.outbox,
		&maintenance.Periodic{ServiceName: "purge", Interval: s.cfg.PurgeInterval, First: time.Minute, Work: s.purge, Logger: s.cfg.Logger},
		s.erase,
		&maintenance.Periodic{ServiceName: "scrub", Interval: s.cfg.ScrubInterval, Work: s.scrub, Logger: s.cfg.Logger},
	}
	if alert := orDefault(s.cfg.BacklogAlert, webhooks.DefaultBacklogAlert); alert > 0 {
		every := cmp.Or(s.cfg.BacklogInterval, min(max(alert/10, time.Second), 30*time.Second))
		services = append(services, &maintenance.Periodic{ServiceName: "backlog", Interval: every, Work: s.checkBacklogs, Logger: s.cfg.Logger})
	}
	probe := orDefault(s.cfg.RecoveryProbe, webhooks.DefaultRecoveryProbe)
	every := cmp.Or(s.cfg.RecoveryInterval, min(max(probe/10, time.Second), time.Minute))
	services = append(services, &maintenance.Periodic{ServiceName: "recovery", Interval: every, Work: s.probeDisabled, Logger: s.cfg.Logger})
	if s.cluster == nil {
		return services
	}
	services = append(services,
		s.notify,
		maintenance.Func{ServiceName: "listen", Fn: func(ctx context.Context) { s.cluster.Listen(ctx, s.Engine.Wake) }},
		&maintenance.Periodic{ServiceName: "keys", Interval: cmp.Or(s.cfg.KeysRefresh, DefaultKeysRefresh), Work: s.refreshKeys, Logger: s.cfg.Logger},
	)
	if pg, ok := s.Store.(*postgres.Store); ok {
		services = append(services,
			&maintenance.Periodic{ServiceName: "vacuum", Interval: postgres.VacuumInterval, Work: pg.Vacuum, Logger: s.cfg.Logger},
			&maintenance.Periodic{ServiceName: "processes", Interval: postgres.ProcessesInterval, Work: pg.CountProcesses, Logger: s.cfg.Logger})
	}
	return services
}

// announce tells the engines that deliveries are due: this process's, and,
// when it has no room for them, the others' (a NOTIFY wakes every
// listening process, and each then spends a claim on work that one process
// was already taking).
func (s *Service) announce() {
	s.Engine.Wake()
	if s.cluster != nil && !s.Engine.HasRoom() {
		s.notify.Kick()
	}
}

// notifyOthers sends the NOTIFY that announce asked for.
func (s *Service) notifyOthers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.cluster.Notify(ctx)
}

// drainOutbox drains the outbox until it is empty.
func (s *Service) drainOutbox(ctx context.Context) error {
	for ctx.Err() == nil {
		n, err := s.App.DrainOutbox(ctx, outboxBatch)
		if err != nil || n < outboxBatch {
			return err
		}
	}
	return nil
}

// checkBacklogs raises and clears the backlog alerts.
func (s *Service) checkBacklogs(ctx context.Context) error {
	_, err := s.App.CheckBacklogs(ctx)
	return err
}

// probeDisabled sends the recovery probes that are due, all of them.
func (s *Service) probeDisabled(ctx context.Context) error {
	for ctx.Err() == nil {
		n, err := s.App.ProbeDisabled(ctx, probeBatch)
		if err != nil || n < probeBatch {
			return err
		}
	}
	return nil
}

// purge deletes the events (with their deliveries and attempts) older than
// the retention, in small batches with a pause between them, until none
// is left. With PostgreSQL one process purges at a time; the others' calls
// return at once.
func (s *Service) purge(ctx context.Context) error {
	total := 0
	for ctx.Err() == nil {
		now := s.cfg.Now()
		n, err := s.Store.Purge(ctx, now.Add(-s.cfg.Retention), now, purgeBatch)
		if err != nil {
			return err
		}
		total += n
		if n < purgeBatch {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	if total > 0 {
		s.scrubDue.Store(true)
		s.cfg.Logger.Info("purged events older than the retention", "events", total, "retention", s.cfg.Retention.String())
	}
	return nil
}

// eraseJobs works through the erasure jobs until none is left, a chunk
// of events per transaction (webhooks.ErasureChunk), pausing after each
// chunk erasePause times as long as it took: an erasure takes at most a
// fifth of the writer's time, and the registrations and attempts waiting
// for it go first.
func (s *Service) eraseJobs(ctx context.Context) error {
	chunks := 0
	start := time.Now()
	for ctx.Err() == nil {
		t := time.Now()
		more, err := s.App.EraseNext(ctx, webhooks.ErasureChunk)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		chunks++
		select {
		case <-ctx.Done():
		case <-time.After(erasePause * time.Since(t)):
		}
	}
	if chunks > 0 {
		s.cfg.Logger.Info("erased the events of deleted companies or accounts", "chunks", chunks, "took", time.Since(start).Round(time.Millisecond).String())
	}
	return nil
}

// scrub makes what was erased or purged since the last scrub leave the
// disk; one that could not finish is tried again at the next interval.
func (s *Service) scrub(ctx context.Context) error {
	if !s.scrubDue.Swap(false) {
		return nil
	}
	if err := s.Store.Scrub(ctx); err != nil {
		s.scrubDue.Store(true)
		return err
	}
	return nil
}
