package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	webhooks "github.com/factuarea/webhooks"
)

// checkFields refuses what encoding/json lets through into v: a field
// name that matches one of v's only when case is ignored ({"NAME": …} for
// "name"), and a field given twice, whose first value the decoder drops
// silently (and which two parsers may read differently). raw has decoded
// into v without error.
func checkFields(raw []byte, v any) error {
	return checkValue(raw, reflect.TypeOf(v), "")
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

func checkValue(raw []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawMessage:
		return nil // the producer's JSON, kept as it is
	case t.Kind() == reflect.Struct:
		return checkObject(raw, t, path)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil // null
		}
		for _, item := range items {
			if err := checkValue(item, t.Elem(), path); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkObject checks one object's field names against struct type t.
func checkObject(raw []byte, t reflect.Type, path string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil // null
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil // the decoder has already accepted it
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		ft, ok := fields[key]
		if !ok {
			for name := range fields {
				if strings.EqualFold(name, key) {
					return webhooks.Errorf(webhooks.EUNKNOWNFIELD, "Unknown field %q: field names are case-sensitive; did you mean %q?", path+key, path+name)
				}
			}
			return nil // a field the decoder refuses (it did not)
		}
		if seen[key] {
			return webhooks.Errorf(webhooks.EINVALID, "Field %q is given twice.", path+key)
		}
		seen[key] = true
		if err := checkValue(value, ft, path+key+"."); err != nil {
			return err
		}
	}
	return nil
}
