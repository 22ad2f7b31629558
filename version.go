package webhooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Payload versions, newest first. An event is stored once, in the newest
// version's shape, and rendered for each endpoint's pinned version when its
// delivery is created.
const (
	LatestAPIVersion   = "2026-09-23"
	APIVersion20250601 = "2025-06-01"
)

// versions lists every payload version, newest first, each with the
// transform that turns the data of the version before it (the next newer
// one) into its own. Adding a version is adding one entry at the top.
var versions = []struct {
	name string
	down func(data *versionedData) error
}{
	{LatestAPIVersion, nil},
	{APIVersion20250601, down20250601},
}

// versionedData is an event's data while it is rendered: the type and the
// object, with the object's keys in the producer's order.
type versionedData struct {
	eventType string
	withType  bool // whether data carries "type" beside "object"
	object    *orderedObject
}

// APIVersions returns the payload versions, newest first.
func APIVersions() []string {
	names := make([]string, len(versions))
	for i, v := range versions {
		names[i] = v.name
	}
	return names
}

// KnownAPIVersion reports whether v is a payload version.
func KnownAPIVersion(v string) bool {
	for _, known := range versions {
		if known.name == v {
			return true
		}
	}
	return false
}

// RenderData returns the event's "data" for payload version v, as compact
// JSON: the newest version's data, transformed version by version down to v.
func RenderData(ev *Event, v string) (json.RawMessage, error) {
	if ev.Erased() {
		return json.RawMessage(`null`), nil // its payload is gone (SPEC 19)
	}
	if v == LatestAPIVersion {
		// The common case, without parsing the object.
		var b bytes.Buffer
		b.WriteString(`{"type":`)
		writeJSONString(&b, ev.Type)
		b.WriteString(`,"object":`)
		b.Write(ev.Object)
		b.WriteByte('}')
		return b.Bytes(), nil
	}
	obj, err := parseOrderedObject(ev.Object)
	if err != nil {
		return nil, err
	}
	d := &versionedData{eventType: ev.Type, withType: true, object: obj}
	for _, step := range versions {
		if step.down != nil {
			if err := step.down(d); err != nil {
				return nil, err
			}
		}
		if step.name == v {
			var b bytes.Buffer
			b.WriteByte('{')
			if d.withType {
				b.WriteString(`"type":`)
				writeJSONString(&b, d.eventType)
				b.WriteByte(',')
			}
			b.WriteString(`"object":`)
			d.object.writeTo(&b)
			b.WriteByte('}')
			return b.Bytes(), nil
		}
	}
	return nil, fmt.Errorf("unknown api version %q", v)
}

// down20250601: data had no "type", and an invoice's decimal string "total"
// was the integer "total_cents".
func down20250601(d *versionedData) error {
	d.withType = false
	if !d.object.isA("invoice") {
		return nil
	}
	i := d.object.index("total")
	if i < 0 {
		return nil
	}
	cents, err := decimalToCents(d.object.values[i])
	if err != nil {
		return err
	}
	d.object.keys[i] = "total_cents"
	d.object.values[i] = json.RawMessage(strconv.FormatInt(cents, 10))
	return nil
}

// validateObjectForVersions refuses, at registration, an object that some
// payload version could not render, so that rendering never fails later.
// object is compacted (see Event.Validate).
func validateObjectForVersions(object json.RawMessage) error {
	var kind, total []byte
	if v, ok := topLevel(object, "object", "total"); ok {
		kind, total = v[0], v[1]
	} else {
		obj, err := parseOrderedObject(object)
		if err != nil {
			return Errorf(EINVALIDJSON, "data.object is not a JSON object.")
		}
		if i := obj.index("object"); i >= 0 {
			kind = obj.values[i]
		}
		if i := obj.index("total"); i >= 0 {
			total = obj.values[i]
		}
	}
	if total != nil && isJSONString(kind, "invoice") {
		if _, err := decimalToCents(total); err != nil {
			return Errorf(EUNPROCESSABLE, "data.object.total of an invoice must be a decimal string with at most two decimals, such as \"1210.00\".")
		}
	}
	return nil
}

// isJSONString reports whether raw is the JSON string s.
func isJSONString(raw []byte, s string) bool {
	if len(raw) == len(s)+2 && raw[0] == '"' && string(raw[1:len(raw)-1]) == s {
		return true // the common case, without escapes
	}
	var got string
	return bytes.IndexByte(raw, '\\') >= 0 && json.Unmarshal(raw, &got) == nil && got == s
}

// decimalToCents reads a JSON string holding a decimal amount with at most
// two decimals ("1210.00", "-3.5", "7") as an integer number of cents.
func decimalToCents(raw json.RawMessage) (int64, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("total is not a string")
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(frac) > 2 || len(whole) > 15 || !allDigits(whole) || !allDigits(frac) {
		return 0, fmt.Errorf("total %q is not a decimal with at most two decimals", s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, err
	}
	if neg {
		n = -n
	}
	return n, nil
}

// orderedObject is a JSON object whose key order is kept, so that a
// transformed payload differs from the original only where the transform
// changed it.
type orderedObject struct {
	keys   []string
	values []json.RawMessage
}

func parseOrderedObject(raw json.RawMessage) (*orderedObject, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object")
	}
	o := &orderedObject{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.keys = append(o.keys, key)
		o.values = append(o.values, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

func (o *orderedObject) index(key string) int {
	for i, k := range o.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// isA reports whether the object's "object" field is the string kind.
func (o *orderedObject) isA(kind string) bool {
	i := o.index("object")
	if i < 0 {
		return false
	}
	var s string
	return json.Unmarshal(o.values[i], &s) == nil && s == kind
}

func (o *orderedObject) writeTo(b *bytes.Buffer) {
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(b, k)
		b.WriteByte(':')
		b.Write(o.values[i])
	}
	b.WriteByte('}')
}

// writeJSONString writes s as a JSON string, escaped as encoding/json does.
func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}
