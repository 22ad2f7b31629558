package webhooks

// OrderKey names a chain of ordered deliveries (SPEC 18): one endpoint's
// deliveries of the events that share one ordering key, sent one at a
// time, in registration order.
type OrderKey struct {
	EndpointID string
	Key        string
}

// Chain returns the chain d belongs to, and false when it belongs to none
// (its endpoint is not ordered, or its event has no key, or it is sent by
// hand outside any).
func (d *Delivery) Chain() (OrderKey, bool) {
	return OrderKey{EndpointID: d.EndpointID, Key: d.OrderingKey}, d.OrderingKey != ""
}

// Chain makes each pending delivery of ds that belongs to a chain wait
// behind the one before it in the chain (WaitingFor): tails holds each
// chain's last pending delivery now (absent or "" when none), and Chain
// moves it on. ds are in registration order. A delivery that waits is not
// due until the one it waits behind ends, and is not handed to an engine.
func Chain(ds []*Delivery, tails map[OrderKey]string) {
	for _, d := range ds {
		k, ok := d.Chain()
		if !ok || d.Status != DeliveryPending {
			continue
		}
		d.WaitingFor = tails[k]
		tails[k] = d.ID
	}
}

// Chained reports whether the record's delivery belongs to a chain:
// storing a record that ends it releases the delivery behind it.
func (r *AttemptRecord) Chained() bool {
	return r.Delivery != nil && r.Delivery.OrderingKey != ""
}

// Chains returns the chains ds belong to, once each, in order.
func Chains(ds []*Delivery) []OrderKey {
	seen := map[OrderKey]bool{}
	var out []OrderKey
	for _, d := range ds {
		if k, ok := d.Chain(); ok && d.Status == DeliveryPending && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// OutOfOrder takes the delivery out of its chain: a retry by hand is
// sent at once, whatever the order (SPEC 18).
func (d *Delivery) OutOfOrder() { d.OrderingKey, d.WaitingFor = "", "" }

// Waiting reports whether the delivery waits behind another of its chain.
func (d *Delivery) Waiting() bool { return d.WaitingFor != "" }
