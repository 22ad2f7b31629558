package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	"github.com/factuarea/webhooks/internal/session"
)

// testClusterKeys: one admin key per database. The first process stores
// its key's hash and a portal key; a process with the same key joins and
// gets the same portal key; one with another key is refused unless it
// names the stored one as the key it replaces (a rotation), which every
// other process then follows.
func testClusterKeys(t *testing.T, open func(t *testing.T) Store) {
	join := func(t *testing.T, s Store, key, previous string) (*app.ClusterKeys, string, error) {
		t.Helper()
		return app.JoinCluster(t.Context(), s, key, previous, t0)
	}
	group(t, "JoinCluster", func(t *testing.T) {
		t.Run("OK", func(t *testing.T) {
			s := setup(t, open)
			if has, err := app.HasClusterKeys(t.Context(), s); has || err != nil {
				t.Fatalf("HasClusterKeys on a new database: got %t, %v, want false", has, err)
			}
			first, outcome, err := join(t, s, "key-a", "")
			if err != nil || outcome != app.KeysCreated {
				t.Fatalf("JoinCluster on a new database: got %q, %v, want %q", outcome, err, app.KeysCreated)
			}
			if len(first.PortalKey) != 32 || len(first.AdminKeyHash) != 32 {
				t.Errorf("keys: got a %d-byte portal key and a %d-byte hash, want 32 and 32", len(first.PortalKey), len(first.AdminKeyHash))
			}
			if has, err := app.HasClusterKeys(t.Context(), s); !has || err != nil {
				t.Errorf("HasClusterKeys after the first join: got %t, %v, want true", has, err)
			}
			again, outcome, err := join(t, s, "key-a", "")
			if err != nil || outcome != app.KeysJoined || !bytes.Equal(again.PortalKey, first.PortalKey) {
				t.Errorf("JoinCluster with the same key: got %q, %v, want %q and the first portal key", outcome, err, app.KeysJoined)
			}
			stored, err := s.FindClusterKeys(t.Context())
			if err != nil || !bytes.Equal(stored.AdminKeyHash, first.AdminKeyHash) || !bytes.Equal(stored.PortalKey, first.PortalKey) {
				t.Errorf("FindClusterKeys: got %+v, %v, want the first keys", stored, err)
			}
			checkTime(t, "updated", stored.Updated, t0)
		})

		t.Run("ErrAdminKeyMismatch", func(t *testing.T) {
			s := setup(t, open)
			first, _, err := join(t, s, "key-a", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, previous := range []string{"", "key-c"} {
				if k, _, err := join(t, s, "key-b", previous); !errors.Is(err, app.ErrAdminKeyMismatch) || k != nil {
					t.Errorf("JoinCluster with another key (previous %q): got %v, %v, want ErrAdminKeyMismatch", previous, k, err)
				}
			}
			stored, err := s.FindClusterKeys(t.Context())
			if err != nil || !bytes.Equal(stored.AdminKeyHash, first.AdminKeyHash) || !bytes.Equal(stored.PortalKey, first.PortalKey) {
				t.Errorf("keys after refused joins: got %+v, %v, want the first keys unchanged", stored, err)
			}
			if _, _, err := join(t, s, "key-a", "key-a"); err == nil {
				t.Errorf("JoinCluster naming its own key as the previous one: got no error")
			}
		})

		t.Run("Rotate", func(t *testing.T) {
			s := setup(t, open)
			old, _, err := join(t, s, "key-a", "")
			if err != nil {
				t.Fatal(err)
			}
			// A process running with the old key.
			running := app.New(app.Config{Store: s, Sessions: session.NewSigner("unused"), Now: func() time.Time { return t0 }})
			running.UseKeys(old)
			oldLink, _ := mustSigner(old).Issue(webhooks.NewID(), t0)

			rotated, outcome, err := join(t, s, "key-b", "key-a")
			if err != nil || outcome != app.KeysRotated || bytes.Equal(rotated.PortalKey, old.PortalKey) {
				t.Fatalf("JoinCluster with the previous key: got %q, %v, want %q and a new portal key", outcome, err, app.KeysRotated)
			}
			// The same settings again (a second process of the rotation,
			// or a restart) join the rotated keys.
			if k, outcome, err := join(t, s, "key-b", "key-a"); err != nil || outcome != app.KeysJoined || !bytes.Equal(k.PortalKey, rotated.PortalKey) {
				t.Errorf("JoinCluster after the rotation, same settings: got %q, %v, want %q", outcome, err, app.KeysJoined)
			}
			if _, _, err := join(t, s, "key-a", ""); !errors.Is(err, app.ErrAdminKeyMismatch) {
				t.Errorf("JoinCluster with the rotated-out key: got %v, want ErrAdminKeyMismatch", err)
			}

			// The running process follows at its next refresh.
			if _, err := running.Authenticate(t.Context(), "key-a"); err != nil {
				t.Fatalf("before the refresh, the running process's key: %v", err)
			}
			changed, err := running.RefreshKeys(t.Context())
			if err != nil || !changed {
				t.Fatalf("RefreshKeys after a rotation: got %t, %v, want a change", changed, err)
			}
			if c, err := running.Authenticate(t.Context(), "key-b"); err != nil || !c.IsAdmin() {
				t.Errorf("after the refresh, the new key: got %+v, %v, want the admin", c, err)
			}
			_, err = running.Authenticate(t.Context(), "key-a")
			checkCode(t, "after the refresh, the previous key", err, webhooks.EUNAUTHORIZED)
			if changed, err := running.RefreshKeys(t.Context()); err != nil || changed {
				t.Errorf("RefreshKeys with nothing new: got %t, %v, want no change", changed, err)
			}
			// Portal links signed before the rotation end with it.
			link, _ := mustSigner(rotated).Issue(webhooks.NewID(), t0)
			if _, err := mustSigner(rotated).VerifyLink(oldLink, t0); !errors.Is(err, session.ErrInvalid) {
				t.Errorf("a link signed before the rotation: got %v, want ErrInvalid", err)
			}
			if _, err := mustSigner(rotated).VerifyLink(link, t0); err != nil {
				t.Errorf("a link signed after the rotation: %v", err)
			}
		})

		t.Run("Concurrent", func(t *testing.T) {
			s := setup(t, open)
			// Processes starting at once on a new database: one key wins,
			// every process with it gets the same portal key, every other is
			// refused.
			const n = 8
			var wg sync.WaitGroup
			keys := make([]*app.ClusterKeys, n)
			outcomes, errs := make([]string, n), make([]error, n)
			for i := range n {
				wg.Go(func() {
					keys[i], outcomes[i], errs[i] = join(t, s, fmt.Sprintf("key-%d", i%2), "")
				})
			}
			wg.Wait()
			stored, err := s.FindClusterKeys(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			created := 0
			for i := range n {
				switch {
				case errs[i] == nil:
					if !bytes.Equal(keys[i].PortalKey, stored.PortalKey) || !bytes.Equal(keys[i].AdminKeyHash, stored.AdminKeyHash) {
						t.Errorf("process %d: got keys other than the stored ones", i)
					}
					if outcomes[i] == app.KeysCreated {
						created++
					}
				case !errors.Is(errs[i], app.ErrAdminKeyMismatch):
					t.Errorf("process %d: %v", i, errs[i])
				}
			}
			if created != 1 {
				t.Errorf("%d processes created the keys, want 1", created)
			}
		})
	})
}

// mustSigner returns a Signer with k's portal key, as a process with k
// signs.
func mustSigner(k *app.ClusterKeys) *session.Signer { return session.NewSigner(string(k.PortalKey)) }
