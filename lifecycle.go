package webhooks

import (
	"strings"
	"time"
)

// Data lifecycle (SPEC 19): renaming an account or a company, erasing an
// event's payload, and deleting a company or an account, whose events are
// erased by a durable Erasure.

// Rename validates and sets the account's name (the rule of Validate's).
func (a *Account) Rename(name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return Errorf(EINVALID, "name is required.")
	}
	if err := CheckLength("name", name, MaxNameLength); err != nil {
		return err
	}
	a.Name = name
	return nil
}

// Rename validates and sets the company's name. A NIF never changes: a
// company with another NIF is another company.
func (c *Company) Rename(name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return Errorf(EINVALID, "name is required.")
	}
	if err := CheckLength("name", name, MaxNameLength); err != nil {
		return err
	}
	c.Name = name
	return nil
}

// Erased reports whether the event's payload was erased.
func (e *Event) Erased() bool { return !e.ErasedAt.IsZero() }

// Erase removes what an erasure removes from the event: its payload
// (data.object) and the trace of its registration. What stays is what
// deduplication, idempotency keys and reconciliation need: the id, the
// type, the times, the owners and the correlation id; its deliveries keep
// their ids, states and attempt counts, without their bodies or their
// attempts' response bodies, and a pending one ends failed with
// ReasonEventErased (it has nothing left to send). Erasing an erased event
// changes nothing: it keeps its first erased_at.
func (e *Event) Erase(now time.Time) {
	if !e.Erased() {
		e.ErasedAt = now
	}
	e.Object, e.Traceparent = nil, ""
}

// EventErased is the error of a resend of an erased event's delivery.
func EventErased(id string) *Error {
	return Errorf(EEVENTERASED, "event %s was erased: its payload is gone, so its deliveries cannot be sent again.", id)
}

// HasManagedAccounts is the error of the deletion of an account that
// provisioned an account that still exists.
func HasManagedAccounts(id string) *Error {
	return Errorf(EHASMANAGEDACCOUNTS, "account %s provisioned accounts that still exist: delete them first.", id)
}

// Erasure is the durable job of erasing every event of a deleted company
// (CompanyID) or account (AccountID, CompanyID empty: its account.*
// events and its companies' events). It is stored in the transaction that
// deletes its owner, and worked through in short transactions, a chunk
// of events each (app.EraseNext), so that a large erasure stalls nothing
// and a crash in the middle leaves a job that the next start finishes.
// Until an event's chunk is erased, reads answer it as erased already
// (driver.Store.FindEvent), and the deletion ended its pending deliveries.
//
// Test pings and operational events are not the owner's events: they
// carry nothing of the platform's payloads, and stay.
type Erasure struct {
	ID        string
	CompanyID string
	AccountID string
	// Created is when the owner was deleted: the erased_at of its events.
	Created time.Time
}

// ErasureChunk is how many events one transaction of an erasure erases:
// a few milliseconds of writes, so that registrations and deliveries go on
// between chunks.
const ErasureChunk = 50
