package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// TestBatchInput: an item of a batch is decoded with the checks of a
// request body of its own (exact field names, a field given twice, types,
// the size POST /v1/events takes), and the request as a whole with those
// of its top level only, so that one bad item refuses itself.
func TestBatchInput(t *testing.T) {
	const company = "01a22917-3161-717a-8fba-6ad9b43f2084"
	for item, want := range map[string]string{
		`{"type": "invoice.sent", "company_id": "` + company + `", "data": {"object": {}}}`:                          "",
		`{"type": "invoice.sent", "company_id": "` + company + `", "data": {"object": {}}, "idempotency_key": "k"}`:  "",
		`{"type": "invoice.sent", "company_id": "` + company + `", "data": {"object": {}}, "idempotency_key": null}`: "",
		`{"type": "invoice.sent", "company_id": "` + company + `", "data": {"object": {"Type": 1}}}`:                 "",
		`{"type": "invoice.sent", "data": {"object": {}}, "id": "x"}`:                                                webhooks.EUNKNOWNFIELD,
		`{"Type": "invoice.sent", "data": {"object": {}}}`:                                                           webhooks.EUNKNOWNFIELD,
		`{"type": "invoice.sent", "data": {"Object": {}}}`:                                                           webhooks.EUNKNOWNFIELD,
		`{"type": "invoice.sent", "data": {"object": {}}, "Idempotency_Key": "k"}`:                                   webhooks.EUNKNOWNFIELD,
		`{"type": "invoice.sent", "type": "invoice.paid", "data": {"object": {}}}`:                                   webhooks.EINVALID,
		`{"type": "invoice.sent", "data": {"object": {}}, "idempotency_key": "a", "idempotency_key": "b"}`:           webhooks.EINVALID,
		`{"type": 5, "data": {"object": {}}}`:                                                                        webhooks.EINVALID,
		`{"type": "invoice.sent", "data": {"object": {}}, "idempotency_key": 42}`:                                    webhooks.EINVALID,
		`{"type": "invoice.sent", "data": {"object": {}}, "idempotency_key": ""}`:                                    webhooks.EINVALID,
		`{"type": "invoice.sent", "company_id": "` + company + `"}`:                                                  webhooks.EINVALID,
		`null`:           webhooks.EINVALIDJSON,
		`[]`:             webhooks.EINVALIDJSON,
		`"invoice.sent"`: webhooks.EINVALIDJSON,
		`{"type": "invoice.sent", "data": {"object": {"note": "` + strings.Repeat("x", MaxBodyBytes) + `"}}}`: webhooks.ETOOLARGE,
	} {
		in, err := batchInput(json.RawMessage(item))
		if got := webhooks.ErrorCode(err); got != want {
			t.Errorf("%.120s: got %q (%v), want %q", item, got, err, want)
		}
		if want == "" && (in.Type != "invoice.sent" || len(in.Object) == 0) {
			t.Errorf("%.120s: got %+v", item, in)
		}
	}
	in, err := batchInput(json.RawMessage(`{"type": "account.updated", "account_id": "a", "correlation_id": "c", "livemode": false, "data": {"object": {"x": 1}}, "idempotency_key": "k"}`))
	if err != nil || in.AccountID != "a" || in.CorrelationID != "c" || in.Livemode == nil || *in.Livemode || in.IdempotencyKey != "k" || string(in.Object) != `{"x": 1}` {
		t.Errorf("every field: got %+v, %v", in, err)
	}

	for body, want := range map[string]string{
		`{"events": [{"type": 5}, {"Type": "x"}, null]}`: "",
		`{"events": [], "Events": []}`:                   webhooks.EUNKNOWNFIELD,
		`{"events": [], "idempotency_key": "k"}`:         webhooks.EUNKNOWNFIELD,
		`{"events": {}}`:                                 webhooks.EINVALID,
		`{"events": [{"type": "x"}`:                      webhooks.EINVALIDJSON,
		`{"events": [], "events": []}`:                   webhooks.EINVALID,
	} {
		var req batchRequest
		if got := webhooks.ErrorCode(decodeBytes([]byte(body), &req)); got != want {
			t.Errorf("batch %s: got %q, want %q", body, got, want)
		}
	}
}

// TestSizeText: the 413's message names the limit as the documentation
// does.
func TestSizeText(t *testing.T) {
	if got := sizeText(MaxBodyBytes); got != "256 KiB" {
		t.Errorf("sizeText(MaxBodyBytes) = %q", got)
	}
	if got := sizeText(MaxBatchBodyBytes); got != "4 MiB" {
		t.Errorf("sizeText(MaxBatchBodyBytes) = %q", got)
	}
}
