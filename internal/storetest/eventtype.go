package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
	core "github.com/factuarea/webhooks/internal/queue"
)

// invoiceSchema is the schema of the suite's invoice.sent.
const invoiceSchema = `{"type": "object", "required": ["id", "total"],
	"properties": {"id": {"type": "string"}, "total": {"type": "string", "pattern": "^[0-9]+\\.[0-9]{2}$"}}}`

// declare declares an event type at now, failing the test if it is
// refused.
func declare(tb testing.TB, uc *app.App, name, schema, example string) *webhooks.EventType {
	tb.Helper()
	in := app.EventTypeInput{Name: name, Description: "When " + name + " happens."}
	if schema != "" {
		in.Schema = json.RawMessage(schema)
	}
	if example != "" {
		in.Example = json.RawMessage(example)
	}
	t, err := uc.CreateEventType(tb.Context(), admin, in)
	if err != nil {
		tb.Fatalf("CreateEventType(%s): %v", name, err)
	}
	return t
}

// wantCode checks err's code, and that its message holds each of parts.
func wantCode(tb testing.TB, what string, err error, code string, parts ...string) {
	tb.Helper()
	if got := webhooks.ErrorCode(err); got != code {
		tb.Errorf("%s: got %v, want %s", what, err, code)
		return
	}
	for _, p := range parts {
		if msg := webhooks.ErrorMessage(err); !strings.Contains(msg, p) {
			tb.Errorf("%s: got message %q, want it to contain %q", what, msg, p)
		}
	}
}

// invoiceInput is an event input of the company with object.
func invoiceInput(companyID, typ, object string) app.EventInput {
	return app.EventInput{Type: typ, CompanyID: companyID, Object: json.RawMessage(object)}
}

func testEventTypes(t *testing.T, open func(t *testing.T) Store) {
	group(t, "EventTypes", func(t *testing.T) {
		t.Run("Declare", func(t *testing.T) {
			s := setup(t, open)
			ctx := t.Context()
			uc := UseCases(s, at(time.Hour))
			v0, types, err := s.Catalog(ctx)
			if err != nil || len(types) != 0 {
				t.Fatalf("Catalog of a new store: got %d types, %v; want none", len(types), err)
			}
			// The documents are kept as given, compact, keys in their order.
			got := declare(t, uc, "invoice.sent", invoiceSchema, `{ "total": "12.10", "id": "inv_1" }`)
			if string(got.Example) != `{"total":"12.10","id":"inv_1"}` {
				t.Errorf("example: got %s, want it compact in the order given", got.Example)
			}
			found, err := s.FindEventType(ctx, "invoice.sent")
			if err != nil {
				t.Fatal(err)
			}
			if found.Name != "invoice.sent" || found.Description != got.Description || string(found.Example) != string(got.Example) ||
				string(found.Schema) != string(got.Schema) || found.Archived {
				t.Errorf("FindEventType: got %+v, want %+v", found, got)
			}
			checkTime(t, "created", found.Created, at(time.Hour))
			checkTime(t, "updated", found.Updated, at(time.Hour))
			declare(t, uc, "invoice.paid", "", "")
			found, _ = s.FindEventType(ctx, "invoice.paid")
			if found.Example != nil || found.Schema != nil {
				t.Errorf("a type without documents: got example %s schema %s, want none", found.Example, found.Schema)
			}

			v1, types, err := s.Catalog(ctx)
			if err != nil || v1 == v0 || len(types) != 2 || types[0].Name != "invoice.paid" || types[1].Name != "invoice.sent" {
				t.Fatalf("Catalog: got version %d (was %d) and %d types, %v; want a new version and the two by name", v1, v0, len(types), err)
			}

			_, err = uc.CreateEventType(ctx, admin, app.EventTypeInput{Name: "invoice.sent", Description: "Again."})
			wantCode(t, "declaring it again", err, webhooks.EEVENTTYPEEXISTS, "PATCH /v1/event_types/invoice.sent")
			for _, in := range []app.EventTypeInput{
				{Name: "Invoice Sent", Description: "x"},
				{Name: "invoice", Description: "x"},
				{Name: "webhook_endpoint.failing", Description: "x"},
				{Name: "invoice.created", Description: " "},
				{Name: "invoice.created", Description: "x", Example: json.RawMessage(`[1]`)},
				{Name: "invoice.created", Description: "x", Schema: json.RawMessage(`"object"`)},
				{Name: "invoice.created", Description: "x", Schema: json.RawMessage(`{"type": "no such type"}`)},
				{Name: "invoice.created", Description: "x", Schema: json.RawMessage(`{"$ref": "file:///etc/passwd"}`)},
			} {
				_, err := uc.CreateEventType(ctx, admin, in)
				wantCode(t, fmt.Sprintf("%+v", in), err, webhooks.EINVALID)
			}
			_, err = uc.CreateEventType(ctx, admin, app.EventTypeInput{Name: "invoice.created", Description: "x",
				Schema: json.RawMessage(invoiceSchema), Example: json.RawMessage(`{"id": "inv_1", "total": 12.1}`)})
			wantCode(t, "an example the schema refuses", err, webhooks.EINVALIDEVENTDATA, "example does not match the schema of invoice.created: at example/total")
			_, err = uc.CreateEventType(ctx, app.Caller{Actor: webhooks.Actor{Type: webhooks.ActorAPIKey}, AccountID: webhooks.NewID()},
				app.EventTypeInput{Name: "invoice.created", Description: "x"})
			wantCode(t, "an account key", err, webhooks.EFORBIDDEN)
			// Nothing refused was stored, and the version did not move.
			if v, types, _ := s.Catalog(ctx); v != v1 || len(types) != 2 {
				t.Errorf("after the refusals: got version %d and %d types, want %d and 2", v, len(types), v1)
			}
		})

		t.Run("UpdateAndArchive", func(t *testing.T) {
			s := setup(t, open)
			ctx := t.Context()
			declare(t, UseCases(s, t0), "invoice.sent", invoiceSchema, `{"id":"inv_1","total":"1.00"}`)
			uc := UseCases(s, at(time.Hour))
			desc := "When an invoice is sent to its customer."
			got, err := uc.UpdateEventType(ctx, admin, "invoice.sent", webhooks.EventTypeUpdate{Description: &desc})
			if err != nil || got.Description != desc || got.Schema == nil || got.Example == nil {
				t.Fatalf("UpdateEventType(description): got %+v, %v", got, err)
			}
			checkTime(t, "updated", got.Updated, at(time.Hour))
			checkTime(t, "created", got.Created, t0)
			// A schema the example does not match is refused; with the
			// example removed, it is taken.
			strict := json.RawMessage(`{"type":"object","required":["number"]}`)
			_, err = uc.UpdateEventType(ctx, admin, "invoice.sent", webhooks.EventTypeUpdate{Schema: &strict})
			wantCode(t, "a schema the example does not match", err, webhooks.EINVALIDEVENTDATA, "missing property 'number'")
			null := json.RawMessage(`null`)
			got, err = uc.UpdateEventType(ctx, admin, "invoice.sent", webhooks.EventTypeUpdate{Schema: &strict, Example: &null})
			if err != nil || got.Example != nil || string(got.Schema) != string(strict) {
				t.Fatalf("UpdateEventType(schema, no example): got %+v, %v", got, err)
			}
			_, err = uc.UpdateEventType(ctx, admin, "invoice.unknown", webhooks.EventTypeUpdate{Description: &desc})
			wantCode(t, "an unknown type", err, webhooks.ENOTFOUND)
			_, err = uc.UpdateEventType(ctx, admin, "Not A Name", webhooks.EventTypeUpdate{Description: &desc})
			wantCode(t, "a malformed name", err, webhooks.ENOTFOUND)

			archived, err := UseCases(s, at(2*time.Hour)).ArchiveEventType(ctx, admin, "invoice.sent")
			if err != nil || !archived.Archived {
				t.Fatalf("ArchiveEventType: got %+v, %v", archived, err)
			}
			v, _, _ := s.Catalog(ctx)
			again, err := uc.ArchiveEventType(ctx, admin, "invoice.sent")
			if err != nil || !again.Archived {
				t.Errorf("archiving it again: got %+v, %v", again, err)
			}
			if v2, _, _ := s.Catalog(ctx); v2 != v {
				t.Errorf("archiving an archived type moved the version: %d to %d", v, v2)
			}
			_, err = uc.ArchiveEventType(ctx, admin, "invoice.unknown")
			wantCode(t, "archiving an unknown type", err, webhooks.ENOTFOUND)

			// Declared again, it is un-archived with the new declaration,
			// and keeps its created time.
			back := declare(t, UseCases(s, at(3*time.Hour)), "invoice.sent", "", "")
			found, _ := s.FindEventType(ctx, "invoice.sent")
			if back.Archived || found.Archived || found.Schema != nil || found.Description != "When invoice.sent happens." {
				t.Errorf("declared again: got %+v, want it un-archived with the new declaration", found)
			}
			checkTime(t, "created of the re-declared type", found.Created, t0)
			checkTime(t, "updated of the re-declared type", found.Updated, at(3*time.Hour))
		})

		t.Run("List", func(t *testing.T) {
			s := setup(t, open)
			ctx := t.Context()
			uc := UseCases(s, t0)
			// Byte order on every backend: '.' before '_' before letters.
			names := []string{"invoice_line.added", "invoice.sent", "account.updated", "invoice.paid", "quote.accepted"}
			for _, n := range names {
				declare(t, uc, n, "", "")
			}
			if _, err := uc.ArchiveEventType(ctx, admin, "quote.accepted"); err != nil {
				t.Fatal(err)
			}
			want := []string{"account.updated", "invoice.paid", "invoice.sent", "invoice_line.added", "quote.accepted"}
			var got []string
			after := ""
			for page := 0; page < 10; page++ {
				l, err := uc.ListEventTypes(ctx, admin, webhooks.Page{Limit: 2, StartingAfter: after})
				if err != nil {
					t.Fatal(err)
				}
				for _, et := range l.Data {
					got = append(got, et.Name)
					if et.Archived != (et.Name == "quote.accepted") {
						t.Errorf("%s: archived %t", et.Name, et.Archived)
					}
				}
				if !l.HasMore {
					break
				}
				after = l.Data[len(l.Data)-1].Name
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("the pages: got %v, want %v", got, want)
			}
			_, err := uc.ListEventTypes(ctx, admin, webhooks.Page{Limit: 2, StartingAfter: "invoice.unknown"})
			wantCode(t, "a cursor not in the catalog", err, webhooks.EINVALID)
			_, err = uc.ListEventTypes(ctx, admin, webhooks.Page{Limit: 2, StartingAfter: "Not A Name"})
			wantCode(t, "a malformed cursor", err, webhooks.EINVALID)
			_, err = uc.ListEventTypes(ctx, admin, webhooks.Page{Limit: 101})
			wantCode(t, "limit 101", err, webhooks.EINVALID)
			// Any caller reads the catalog.
			key := app.Caller{Actor: webhooks.Actor{Type: webhooks.ActorAPIKey, ID: webhooks.NewID()}, AccountID: webhooks.NewID()}
			if l, err := uc.ListEventTypes(ctx, key, webhooks.Page{Limit: 100}); err != nil || len(l.Data) != 5 {
				t.Errorf("an account key's list: got %v, %v", l, err)
			}
			if et, err := uc.EventType(ctx, key, "invoice.sent"); err != nil || et.Name != "invoice.sent" {
				t.Errorf("an account key's EventType: got %v, %v", et, err)
			}
			types, err := uc.CatalogTypes(ctx, key)
			if err != nil || len(types) != 4 || types[0].Name != "account.updated" {
				t.Errorf("CatalogTypes: got %v, %v; want the 4 not archived, by name", types, err)
			}
		})

		t.Run("RegisterEvent", func(t *testing.T) {
			s := setup(t, open)
			ctx := t.Context()
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			ep := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			// Two use-case layers on one store are two processes on one
			// database: each holds its own catalog in memory.
			producer, platform := UseCases(s, at(time.Hour)), UseCases(s, at(time.Hour))
			register := func(typ, object string) (*webhooks.Event, error) {
				ev, _, err := producer.RegisterEvent(ctx, admin, invoiceInput(c.ID, typ, object))
				return ev, err
			}
			// Free-form while the catalog is empty (the producer now holds
			// the empty catalog).
			if _, err := register("invoice.snet", `{"id": "inv_1"}`); err != nil {
				t.Fatalf("a free-form type: %v", err)
			}
			declare(t, platform, "invoice.sent", invoiceSchema, "")
			declare(t, platform, "invoice.paid", "", "")
			_, err := register("invoice.snet", `{"id": "inv_1", "total": "1.00"}`)
			wantCode(t, "a typo, once another process declared types", err, webhooks.EUNKNOWNEVENTTYPE, `did you mean "invoice.sent"?`)
			ev, err := register("invoice.sent", `{"id": "inv_1", "total": "1.00"}`)
			if err != nil {
				t.Fatalf("a declared type matching its schema: %v", err)
			}
			_, err = register("invoice.sent", `{"id": "inv_1", "total": 1}`)
			wantCode(t, "an object its schema refuses", err, webhooks.EINVALIDEVENTDATA, "at data.object/total", "got number, want string")
			if _, err := register("invoice.paid", `{"anything": ["goes"]}`); err != nil {
				t.Errorf("a declared type without a schema: %v", err)
			}
			if _, err := platform.ArchiveEventType(ctx, admin, "invoice.paid"); err != nil {
				t.Fatal(err)
			}
			_, err = register("invoice.paid", `{}`)
			wantCode(t, "an archived type", err, webhooks.EUNKNOWNEVENTTYPE, "archived")

			// Only what was accepted is stored: the free-form event, the
			// invoice.sent and the first invoice.paid.
			l, err := s.ListDeliveries(ctx, webhooks.DeliveryFilter{EndpointID: ep.ID}, webhooks.Page{Limit: 100})
			if err != nil || len(l.Data) != 3 {
				t.Fatalf("deliveries: got %d, %v; want 3", len(l.Data), err)
			}
			if MustFindEvent(t, s, ev.ID).Type != "invoice.sent" {
				t.Error("the accepted event was not stored")
			}

			// The batch checks each item on its own.
			out, err := producer.RegisterEvents(ctx, admin, []app.EventInput{
				invoiceInput(c.ID, "invoice.sent", `{"id": "inv_2", "total": "2.00"}`),
				invoiceInput(c.ID, "invoice.sen", `{"id": "inv_3", "total": "3.00"}`),
				invoiceInput(c.ID, "invoice.sent", `{"id": "inv_4"}`),
			})
			if err != nil || len(out) != 3 {
				t.Fatalf("RegisterEvents: got %v, %v", out, err)
			}
			if !out[0].Created {
				t.Errorf("item 0: got %v, want it registered", out[0].Err)
			}
			wantCode(t, "item 1", out[1].Err, webhooks.EUNKNOWNEVENTTYPE, `did you mean "invoice.sent"?`)
			wantCode(t, "item 2", out[2].Err, webhooks.EINVALIDEVENTDATA, "missing property 'total'")

			// Archiving the last type makes the catalog empty again:
			// free-form.
			if _, err := platform.ArchiveEventType(ctx, admin, "invoice.sent"); err != nil {
				t.Fatal(err)
			}
			if _, err := register("anything.goes", `{}`); err != nil {
				t.Errorf("a free-form type once every type is archived: %v", err)
			}
		})

		t.Run("StaleCatalogVersion", func(t *testing.T) {
			// The store's half of the check: an event checked against a
			// version the catalog no longer has is not registered.
			s := setup(t, open)
			ctx := t.Context()
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "*"))
			v0, _, err := s.Catalog(ctx)
			if err != nil {
				t.Fatal(err)
			}
			declare(t, UseCases(s, t0), "invoice.sent", "", "")
			v1, _, _ := s.Catalog(ctx)
			stale := NewEvent(t, "invoice.sent", c.ID, at(time.Minute))
			if _, _, _, err := s.Register(ctx, core.Registration{Event: stale, Catalog: v0, Checked: true}); !errors.Is(err, core.ErrCatalogChanged) {
				t.Fatalf("RegisterEvent checked against version %d of %d: got %v, want ErrCatalogChanged", v0, v1, err)
			}
			if _, err := s.FindEvent(ctx, stale.ID); webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
				t.Errorf("the refused event: got %v, want it not stored", err)
			}
			// A key of a refused registration is not taken either.
			keyed := NewEvent(t, "invoice.sent", c.ID, at(time.Minute))
			key := &webhooks.IdempotencyKey{Key: "k1", RequestHash: []byte("h"), Created: keyed.Created}
			if _, _, _, err := s.Register(ctx, core.Registration{Event: keyed, Key: key, Catalog: v0, Checked: true}); !errors.Is(err, core.ErrCatalogChanged) {
				t.Fatalf("a keyed registration checked against an old version: got %v", err)
			}
			fresh := NewEvent(t, "invoice.sent", c.ID, at(time.Minute))
			if _, ds, created, err := s.Register(ctx, core.Registration{Event: fresh, Key: key, Catalog: v1, Checked: true}); err != nil || !created || len(ds) != 1 {
				t.Fatalf("RegisterEvent checked against the current version: got created %t, %d deliveries, %v", created, len(ds), err)
			}
			// Unchecked (no version): registered whatever the catalog.
			MustRegisterEvent(t, s, NewEvent(t, "some.type", c.ID, at(time.Minute)))

			// In one group: those checked against the current version
			// are registered, the others refused.
			var wg sync.WaitGroup
			evs := make([]*webhooks.Event, 20)
			errs := make([]error, len(evs))
			for i := range evs {
				evs[i] = NewEvent(t, "invoice.sent", c.ID, at(time.Minute))
				v := v1
				if i%2 == 1 {
					v = v0
				}
				wg.Go(func() {
					_, _, _, errs[i] = s.Register(ctx, core.Registration{Event: evs[i], Catalog: v, Checked: true})
				})
			}
			wg.Wait()
			for i, err := range errs {
				if (i%2 == 1) != errors.Is(err, core.ErrCatalogChanged) || (i%2 == 0 && err != nil) {
					t.Errorf("registration %d (stale %t): got %v", i, i%2 == 1, err)
				}
			}
		})

		t.Run("Subscriptions", func(t *testing.T) {
			s := setup(t, open)
			ctx := t.Context()
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			// An endpoint made while the catalog was empty keeps any pattern.
			old := MustCreateEndpoint(t, s, NewCompanyEndpoint(c.ID, "quote.accepted"))
			uc := UseCases(s, t0)
			declare(t, uc, "invoice.sent", "", "")
			declare(t, uc, "invoice.paid", "", "")
			declare(t, uc, "account.updated", "", "")
			for _, events := range [][]string{{"*"}, {"invoice.*"}, {"invoice.sent", "invoice.paid"}} {
				if _, err := createEndpoint(t, s, NewCompanyEndpoint(c.ID, events...)); err != nil {
					t.Errorf("subscribing to %v: %v", events, err)
				}
			}
			if _, err := createEndpoint(t, s, NewAccountEndpoint(a.ID, nil, "account.*")); err != nil {
				t.Errorf("subscribing an account endpoint to account.*: %v", err)
			}
			// The operational events are the service's, in no catalog.
			platform := &webhooks.Endpoint{Scope: webhooks.ScopePlatform, URL: "https://ops.example.com/hooks",
				EnabledEvents: []string{"webhook_endpoint.*", webhooks.EventDeliveryExhausted}, Livemode: true}
			if _, err := createEndpoint(t, s, platform); err != nil {
				t.Errorf("subscribing a platform endpoint to the operational events: %v", err)
			}
			_, err := createEndpoint(t, s, NewCompanyEndpoint(c.ID, "invoice.sent", "invoice.snet"))
			wantCode(t, "a typo", err, webhooks.EUNKNOWNEVENTTYPE, `"invoice.snet" matches no event type`, `did you mean "invoice.sent"?`)
			_, err = createEndpoint(t, s, NewCompanyEndpoint(c.ID, "invoce.*"))
			wantCode(t, "a prefix typo", err, webhooks.EUNKNOWNEVENTTYPE, `did you mean "invoice.*"?`)

			// A change is checked on the patterns it adds.
			events := []string{"invoice.sent", "quote.accepted"}
			if _, err := updateEndpoint(t, s, old.ID, &webhooks.EndpointUpdate{EnabledEvents: &events}, t0); err != nil {
				t.Errorf("keeping a pattern from before the catalog: %v", err)
			}
			url := "https://receiver.example.com/moved"
			if _, err := updateEndpoint(t, s, old.ID, &webhooks.EndpointUpdate{URL: &url}, t0); err != nil {
				t.Errorf("changing the URL only: %v", err)
			}
			added := []string{"invoice.sent", "quote.accepted", "invoice.voided"}
			_, err = updateEndpoint(t, s, old.ID, &webhooks.EndpointUpdate{EnabledEvents: &added}, t0)
			wantCode(t, "adding an unknown type", err, webhooks.EUNKNOWNEVENTTYPE, `"invoice.voided"`)
			if got, _ := s.FindEndpoint(ctx, old.ID); len(got.EnabledEvents) != 2 {
				t.Errorf("the refused change: got %v, want the endpoint unchanged", got.EnabledEvents)
			}
			// The refusal is in the audit log, as any refused change.
			l, err := s.ListAudit(ctx, a.ID, webhooks.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, e := range l.Data {
				found = found || (e.Outcome == webhooks.AuditRefused && e.ErrorCode == webhooks.EUNKNOWNEVENTTYPE)
			}
			if !found {
				t.Error("the refused change is not in the audit log")
			}
		})

		t.Run("Concurrent", func(t *testing.T) {
			// Registrations on one process while another changes the
			// catalog: each is accepted or refused by the catalog, never
			// fails otherwise, and once the change has returned, the next
			// registration follows it.
			s := setup(t, open)
			ctx := t.Context()
			a := MustCreateAccount(t, s, "")
			c := MustCreateCompany(t, s, a.ID)
			producer, platform := UseCases(s, t0), UseCases(s, t0)
			declare(t, platform, "invoice.sent", "", "")
			declare(t, platform, "invoice.paid", "", "")
			stop := make(chan struct{})
			var wg sync.WaitGroup
			var mu sync.Mutex
			var unexpected []error
			for range 4 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						_, _, err := producer.RegisterEvent(ctx, admin, invoiceInput(c.ID, "invoice.paid", `{"id":"x"}`))
						if err != nil && webhooks.ErrorCode(err) != webhooks.EUNKNOWNEVENTTYPE {
							mu.Lock()
							unexpected = append(unexpected, err)
							mu.Unlock()
						}
					}
				})
			}
			for i := range 5 {
				if _, err := platform.ArchiveEventType(ctx, admin, "invoice.paid"); err != nil {
					t.Fatal(err)
				}
				_, _, err := producer.RegisterEvent(ctx, admin, invoiceInput(c.ID, "invoice.paid", `{}`))
				wantCode(t, fmt.Sprintf("round %d, after the archive", i), err, webhooks.EUNKNOWNEVENTTYPE)
				declare(t, platform, "invoice.paid", "", "")
				if _, _, err := producer.RegisterEvent(ctx, admin, invoiceInput(c.ID, "invoice.paid", `{}`)); err != nil {
					t.Errorf("round %d, after the declaration: %v", i, err)
				}
			}
			close(stop)
			wg.Wait()
			for _, err := range unexpected {
				t.Errorf("a registration failed: %v", err)
			}
		})
	})
}
