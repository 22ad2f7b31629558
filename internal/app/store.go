package app

import (
	"context"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
	"github.com/factuarea/webhooks/internal/queue"
)

// Store is what the use cases need of a storage backend, Tx its
// transactions' steps and ClusterKeys the keys its processes share: the
// driver's contract (internal/driver), which each backend implements.
type (
	Store       = driver.Store
	Tx          = driver.Tx
	ClusterKeys = driver.ClusterKeys
)

// Registrar registers the producers' events: the queue core's group
// commit (queue.Registrar), which routes each event and hands its
// deliveries to the engine.
type Registrar interface {
	Register(ctx context.Context, r queue.Registration) (*webhooks.Event, []*webhooks.Delivery, bool, error)
}
