package httpapi

import (
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// TestDecode_Messages: a malformed body's error says where (line, column
// and byte), and an unknown field's names it with its path; content put
// directly in data, without its object, is told so.
func TestDecode_Messages(t *testing.T) {
	for _, tc := range []struct {
		name, body, code, want string
	}{
		{"stray comma", `{"name": "x",}`, webhooks.EINVALIDJSON, "invalid character '}' looking for beginning of object key string, at line 1, column 14 (byte 13)."},
		{"second line", "{\n  \"name\": \"x\"\n  \"plan\": 1}", webhooks.EINVALIDJSON, "at line 3, column 3 (byte 18)."},
		{"after a multi-byte character", "{\"name\": \"Ñandú\" x}", webhooks.EINVALIDJSON, "at line 1, column 18 (byte 19)."},
		{"cut short", `{"name": "x"`, webhooks.EINVALIDJSON, "it ends at line 1, column 13 (byte 12) before the JSON is complete"},
		{"trailing data", "{\"name\": \"x\"}\n x", webhooks.EINVALIDJSON, "more follows the object, at line 2, column 2 (byte 15)"},
		{"unknown field", `{"name": "x", "plan": "gold"}`, webhooks.EUNKNOWNFIELD, `Unknown field "plan".`},
	} {
		var in struct {
			Name string `json:"name"`
		}
		err := decodeBytes([]byte(tc.body), &in)
		if webhooks.ErrorCode(err) != tc.code || !strings.Contains(webhooks.ErrorMessage(err), tc.want) {
			t.Errorf("%s: got %s %q, want %s containing %q", tc.name, webhooks.ErrorCode(err), webhooks.ErrorMessage(err), tc.code, tc.want)
		}
	}

	for _, tc := range []struct{ name, body, want string }{
		{"no object wrapper", `{"type": "invoice.sent", "data": {"id": "x", "number": "FAC-1"}}`, `data must be {"object": {…}}: found "id" directly in data.`},
		{"the invoice's own object member", `{"type": "invoice.sent", "data": {"object": "invoice", "id": "x"}}`, `data must be {"object": {…}}: found "id" directly in data.`},
		{"beside the object", `{"type": "invoice.sent", "data": {"object": {}, "previous": {}}}`, `data must be {"object": {…}}: found "previous" directly in data.`},
		{"top level", `{"type": "invoice.sent", "id": "x", "data": {"object": {}}}`, `Unknown field "id".`},
	} {
		var req eventRequest
		err := decodeBytes([]byte(tc.body), &req)
		if webhooks.ErrorCode(err) != webhooks.EUNKNOWNFIELD || webhooks.ErrorMessage(err) != tc.want {
			t.Errorf("%s: got %s %q, want unknown_field %q", tc.name, webhooks.ErrorCode(err), webhooks.ErrorMessage(err), tc.want)
		}
	}
}
