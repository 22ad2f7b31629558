package sqlite

import (
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// TestLists_Indexes: every page of the history and of the events, first
// or deep, by each filter, and the chunks of recover and of an erasure,
// come from an index in the order they are listed, sorting nothing. The big lists break ties in created by rowid
// (migration 0018): with the indexes before it, which held the id instead,
// each of these sorted its matches ("USE TEMP B-TREE FOR ... ORDER BY").
func TestLists_Indexes(t *testing.T) {
	s := openTemp(t)
	id, at := webhooks.NewID(), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	deep := &after{id: id, created: at.UnixMilli(), rowid: 1}
	check := func(name, q string, args []any, index string) {
		t.Helper()
		p := plan(t, s, q, args...)
		if !strings.Contains(p, "INDEX "+index+" ") || strings.Contains(p, "TEMP B-TREE") {
			t.Errorf("%s: plan: %s; want %s, in order", name, p, index)
		}
	}
	for _, c := range []struct {
		name  string
		f     webhooks.DeliveryFilter
		index string
	}{
		{"all", webhooks.DeliveryFilter{EndpointID: id}, "deliveries_endpoint"},
		{"delivered", webhooks.DeliveryFilter{EndpointID: id, Status: webhooks.DeliveryDelivered}, "deliveries_endpoint"},
		{"pending", webhooks.DeliveryFilter{EndpointID: id, Status: webhooks.DeliveryPending}, "deliveries_endpoint_status"},
		{"failed", webhooks.DeliveryFilter{EndpointID: id, Status: webhooks.DeliveryFailed}, "deliveries_endpoint_status"},
		{"failed_permanently", webhooks.DeliveryFilter{EndpointID: id, Status: webhooks.DeliveryFailedPermanently}, "deliveries_endpoint_status"},
	} {
		for _, a := range []*after{nil, deep} {
			q, args := deliveryList(c.f).page(a, 20)
			check("deliveries, "+c.name, q, args, c.index)
		}
	}
	for _, c := range []struct {
		name  string
		f     webhooks.EventFilter
		index string
	}{
		{"company", webhooks.EventFilter{CompanyID: id}, "events_company"},
		{"account", webhooks.EventFilter{AccountID: id}, "events_account"},
		{"company, type", webhooks.EventFilter{CompanyID: id, Type: "invoice.sent"}, "events_company_type"},
		{"account, type", webhooks.EventFilter{AccountID: id, Type: "invoice.sent"}, "events_account_type"},
		{"company, created", webhooks.EventFilter{CompanyID: id, CreatedGTE: at, CreatedLT: at.Add(time.Hour)}, "events_company"},
		{"account, type, created", webhooks.EventFilter{AccountID: id, Type: "invoice.sent", CreatedGTE: at}, "events_account_type"},
	} {
		for _, a := range []*after{nil, deep} {
			q, args := eventList(c.f).page(a, 20)
			check("events, "+c.name, q, args, c.index)
		}
	}
	// Recover returns every candidate of its window: the failed ones,
	// sorted, and not the whole window's walked for them.
	if p := plan(t, s, qRecoverCandidates(2, false), make([]any, 5)...); !strings.Contains(p, "INDEX deliveries_endpoint_status ") {
		t.Errorf("recover: plan: %s; want deliveries_endpoint_status", p)
	}
	check("recover, delivered too", qRecoverCandidates(2, true), make([]any, 5), "deliveries_endpoint")
	// The counts come from the two indexes alone.
	if p := plan(t, s, qCountAll(2), make([]any, 4)...); strings.Count(p, "COVERING INDEX deliveries_endpoint ") != 1 ||
		strings.Count(p, "COVERING INDEX deliveries_endpoint_status ") != 1 {
		t.Errorf("counts: plan: %s; want the endpoint's and the status index, each alone", p)
	}
	check("erasure, company", qEraseChunk(true), make([]any, 5), "events_company")
	check("erasure, account", qEraseChunk(false), make([]any, 5), "events_account")
}
