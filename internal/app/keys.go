package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Join outcomes: what JoinCluster did with the keys.
const (
	KeysCreated = "created" // this process is the database's first: its admin key is the cluster's
	KeysJoined  = "joined"  // the database has this process's admin key
	KeysRotated = "rotated" // the database had the previous key: this process's replaced it
)

// ErrAdminKeyMismatch is JoinCluster's error when the database was set up
// with another admin key than the one this process was given (or than the
// previous key it names for a rotation).
var ErrAdminKeyMismatch = errors.New("the admin key is not this database's")

// ErrAdminKeyRequired is the error of a process that has no admin key of
// its own, on a database that has one already (see HasClusterKeys): it
// must be given that key, not make another.
var ErrAdminKeyRequired = errors.New("this database already has an admin key")

// JoinCluster checks this process's admin key against the database's and
// returns the keys it serves with. On a database without keys it stores
// the admin key's hash and a new portal key (KeysCreated). When the
// database has another admin key, it fails with ErrAdminKeyMismatch, unless
// previous is that key: then it replaces it by adminKey, with a new portal
// key, in one transaction (KeysRotated), which ends every portal session
// and makes every other process stop accepting the previous key at its
// next RefreshKeys. Rotating to the stored key again changes nothing.
func JoinCluster(ctx context.Context, s Store, adminKey, previous string, now time.Time) (*ClusterKeys, string, error) {
	if adminKey == "" {
		return nil, "", errors.New("an admin key is required")
	}
	if previous == adminKey {
		return nil, "", errors.New("the previous admin key is the admin key itself: give the new key as the admin key and the one it replaces as the previous key")
	}
	h := hashKey(adminKey)
	mine, err := newClusterKeys(h[:], now)
	if err != nil {
		return nil, "", err
	}
	stored, err := s.InitClusterKeys(ctx, mine)
	if err != nil {
		return nil, "", err
	}
	switch {
	case bytes.Equal(stored.AdminKeyHash, h[:]):
		if bytes.Equal(stored.PortalKey, mine.PortalKey) {
			return stored, KeysCreated, nil
		}
		return stored, KeysJoined, nil
	case previous == "":
		return nil, "", ErrAdminKeyMismatch
	}
	ph := hashKey(previous)
	var rotated *ClusterKeys
	err = s.InTx(ctx, func(tx Tx) error {
		k, err := tx.LockClusterKeys(ctx)
		if err != nil {
			return err
		}
		switch {
		case bytes.Equal(k.AdminKeyHash, h[:]):
			rotated = k // another process rotated it first
			return nil
		case !bytes.Equal(k.AdminKeyHash, ph[:]):
			return ErrAdminKeyMismatch
		}
		rotated = mine
		return tx.UpdateClusterKeys(ctx, mine)
	})
	if err != nil {
		return nil, "", err
	}
	if bytes.Equal(rotated.PortalKey, mine.PortalKey) {
		return rotated, KeysRotated, nil
	}
	return rotated, KeysJoined, nil
}

// HasClusterKeys reports whether the database has an admin key already
// (a process without one must then be given it).
func HasClusterKeys(ctx context.Context, s Store) (bool, error) {
	_, err := s.FindClusterKeys(ctx)
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
		return false, nil
	}
	return err == nil, err
}

func newClusterKeys(adminKeyHash []byte, now time.Time) (*ClusterKeys, error) {
	portal := make([]byte, 32)
	if _, err := rand.Read(portal); err != nil {
		return nil, err
	}
	return &ClusterKeys{AdminKeyHash: adminKeyHash, PortalKey: portal, Updated: now}, nil
}

// RefreshKeys reads the database's keys again and starts using them: after
// another process rotated the admin key, this one accepts the new key and
// refuses the previous one, and checks portal links and cookies with the
// new portal key. It reports whether the keys changed.
func (a *App) RefreshKeys(ctx context.Context) (bool, error) {
	k, err := a.cfg.Store.FindClusterKeys(ctx)
	if err != nil {
		return false, err
	}
	return a.UseKeys(k), nil
}

// UseKeys makes the App accept k's admin key, and no other, and its
// Sessions sign and check with k's portal key. It reports whether either
// changed.
func (a *App) UseKeys(k *ClusterKeys) bool {
	var h [32]byte
	copy(h[:], k.AdminKeyHash)
	old := a.adminHash.Swap(&h)
	changed := old == nil || *old != h
	portal := bytes.Clone(k.PortalKey)
	if prev := a.portalKey.Swap(&portal); prev == nil || !bytes.Equal(*prev, portal) {
		changed = true
		if a.cfg.Sessions != nil {
			a.cfg.Sessions.SetSecret(string(portal))
		}
	}
	return changed
}
