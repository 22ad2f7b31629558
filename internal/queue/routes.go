package queue

import (
	"sync"

	webhooks "github.com/factuarea/webhooks"
)

// routes caches what routing an event reads (webhooks.Owners), by the key
// its routing depends on. Those reads were a quarter of a registration's
// time; they change only when an account, a company or an endpoint does,
// which the routing version counts (moved in the changing transaction, by
// triggers in both backends). A group trusts what the cache holds once it
// has taken the owners' locks and read the version: if routing changed
// since the cached reads, it reads them again (see Registrar.write). One
// rule, one cache, whatever the backend.
type routes struct {
	mu      sync.Mutex
	version int64 // the routing version the entries were read at
	byKey   map[webhooks.OwnersKey]*webhooks.Owners
}

// maxRoutes bounds what the cache holds: past it, it starts again.
const maxRoutes = 20000

// get returns the cached owners of each key (nil when not cached), and the
// version they were read at.
func (r *routes) get(keys []webhooks.OwnersKey) ([]*webhooks.Owners, int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*webhooks.Owners, len(keys))
	for i, k := range keys {
		out[i] = r.byKey[k]
	}
	return out, r.version
}

// put caches what was read at version v. Reads of an older version than
// the cache's are dropped; a newer version empties the cache first.
func (r *routes) put(v int64, read map[webhooks.OwnersKey]*webhooks.Owners) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil || v > r.version || len(r.byKey)+len(read) > maxRoutes {
		r.byKey, r.version = map[webhooks.OwnersKey]*webhooks.Owners{}, v
	}
	if v != r.version {
		return
	}
	for k, o := range read {
		r.byKey[k] = o
	}
}

// reset empties the cache.
func (r *routes) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byKey = nil
}
