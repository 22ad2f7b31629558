package httpapi

import (
	"encoding/json"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// TestCheckFields: decodeBytes refuses a field name that matches only when
// case is ignored, at any depth of the request's own objects, and a field
// given twice; the producer's data.object is left as it is.
func TestCheckFields(t *testing.T) {
	type in struct {
		Name   string   `json:"name"`
		Events []string `json:"events"`
		Items  []struct {
			URL string `json:"url"`
		} `json:"items"`
		Data *struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	for body, want := range map[string]string{
		`{"name": "a", "events": ["x", "y"], "items": [{"url": "u"}], "data": {"object": {"NAME": 1, "a": "b\"}"}}}`: "",
		`{"n\u0061me": "escaped, still name"}`:     "",
		`{"items": [], "data": null, "name": "a"}`: "",
		`{"Name": "a"}`:                                     webhooks.EUNKNOWNFIELD,
		`{"data": {"OBJECT": {}}}`:                          webhooks.EUNKNOWNFIELD,
		`{"items": [{"url": "a"}, {"URL": "b"}]}`:           webhooks.EUNKNOWNFIELD,
		`{"name": "a", "name": "b"}`:                        webhooks.EINVALID,
		`{"data": {"object": {}, "object": {}}}`:            webhooks.EINVALID,
		`{"items": [{"url": "a", "url": "b"}]}`:             webhooks.EINVALID,
		`{"name": "a", "events": [], "n\u0061me": "again"}`: webhooks.EINVALID,
	} {
		var v in
		if got := webhooks.ErrorCode(decodeBytes([]byte(body), &v)); got != want {
			t.Errorf("%s: got %q, want %q", body, got, want)
		}
	}
}
