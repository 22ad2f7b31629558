package webhooks

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// checkTopLevel compares topLevel with a decoder's reading of the object
// (valid UTF-8, as Event.Validate checks first).
func checkTopLevel(t *testing.T, raw []byte) {
	var compact bytes.Buffer
	if !utf8.Valid(raw) || json.Compact(&compact, raw) != nil || len(bytes.TrimSpace(raw)) == 0 || bytes.TrimSpace(raw)[0] != '{' {
		return
	}
	obj, err := parseOrderedObject(compact.Bytes())
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	names := append([]string{"object", "total", "absent"}, obj.keys...)
	got, ok := topLevel(compact.Bytes(), names...)
	if !ok {
		return // a name with escapes: the decoder's job
	}
	for n, name := range names {
		var want []byte
		for i := len(obj.keys) - 1; i >= 0; i-- { // the last of a repeated name, as a decoder keeps
			if obj.keys[i] == name {
				want = obj.values[i]
				break
			}
		}
		if !bytes.Equal(got[n], want) {
			t.Errorf("%s: member %q is %q, want %q", raw, name, got[n], want)
		}
	}
}

func TestTopLevel(t *testing.T) {
	for _, raw := range []string{
		`{}`,
		`{"object":"invoice","total":"12.10"}`,
		`{ "id" : "a,b}", "object" : "invoice", "lines": [{"total": "1"}, [1, {"x": "]"}]], "total": "3.5", "n": -1.5e3, "t": true, "z": null }`,
		`{"s":"quote \" and \\ backslash","total":{"nested":{"total":"9"}},"object":"credit_note"}`,
		`{"e\u0073c":"1","object":"invoice"}`,
		`{"a":[],"b":{},"total":"1"}`,
	} {
		checkTopLevel(t, []byte(raw))
	}
}

func FuzzTopLevel(f *testing.F) {
	f.Add([]byte(`{"object":"invoice","total":"12.10","lines":[{"a":"]}"}]}`))
	f.Add([]byte(`{"a":"\\\"","b":[1,2,{"c":null}],"total":0}`))
	f.Fuzz(checkTopLevel)
}

// TestValidate_InvoiceTotal: the object's members are read without a
// decoder, and with one when a name has escapes.
func TestValidate_InvoiceTotal(t *testing.T) {
	for obj, wantErr := range map[string]bool{
		`{"object":"invoice","total":"12.10"}`:         false,
		`{"object":"invoice","total":"12.105"}`:        true,
		`{"object":"invoice","lines":[{"total":"x"}]}`: false,
		`{"object":"credit_note","total":"x"}`:         false,
		`{"object":"\u0069nvoice","total":"x"}`:        true,
		`{"\u006fbject":"invoice","total":"x"}`:        true,
	} {
		err := validateObjectForVersions(json.RawMessage(obj))
		if (err != nil) != wantErr {
			t.Errorf("%s: %v, want an error: %v", obj, err, wantErr)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	object := json.RawMessage(`{"id":"inv_123","object":"invoice","number":"F-2026-0001","total":"1210.00","currency":"EUR",` +
		`"customer":{"name":"Example SL","nif":"B12345674"},"lines":[{"description":"Service","quantity":1,"total":"1000.00"},` +
		`{"description":"VAT 21%","quantity":1,"total":"210.00"}],"issued_at":1790845200}`)
	b.ReportAllocs()
	for b.Loop() {
		e := &Event{Type: "invoice.sent", CompanyID: NewID(), Object: object}
		if err := e.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}
