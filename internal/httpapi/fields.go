package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	webhooks "github.com/factuarea/webhooks"
)

// checkFields refuses what encoding/json lets through into v: a field
// name that matches one of v's only when case is ignored ({"NAME": …} for
// "name"), and a field given twice, whose first value the decoder drops
// silently (and which two parsers may read differently). raw is valid
// JSON (it has decoded into v, or failed only on an unknown field): one
// pass over it, without allocating, checks the names (this runs on every
// request). It also names an unknown field with its path, which the
// decoder's error does not.
func checkFields(raw []byte, v any) error {
	s := &jsonScanner{b: raw}
	s.space()
	return s.value(reflect.TypeOf(v), "")
}

// fieldsOf returns the JSON names of a struct type's fields and their
// types, computed once per type. An untagged embedded struct's fields are
// its own, as encoding/json promotes them (a batch item is an event
// request and more); a field of the struct's own wins over one it embeds.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" && f.Type.Kind() == reflect.Struct {
			for name, ft := range fieldsOf(f.Type) {
				fields[name] = ft
			}
		}
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
	fieldCache.Store(t, fields)
	return fields
}

var fieldCache sync.Map // reflect.Type: map[string]reflect.Type

var rawMessage = reflect.TypeFor[json.RawMessage]()

// jsonScanner walks JSON text known to be valid.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// value checks the value at s.i against t (a struct's field names, at any
// depth of structs and slices of structs) and moves past it.
func (s *jsonScanner) value(t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case s.i >= len(s.b):
		return nil
	case t != nil && t != rawMessage && t.Kind() == reflect.Struct && s.b[s.i] == '{':
		return s.object(t, path)
	case t != nil && t.Kind() == reflect.Slice && s.b[s.i] == '[':
		s.i++
		for s.space(); s.i < len(s.b) && s.b[s.i] != ']'; s.space() {
			if err := s.value(t.Elem(), path); err != nil {
				return err
			}
			if s.space(); s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
				s.space()
			}
		}
		s.i++
		return nil
	}
	s.skip()
	return nil
}

// nested reports whether a field of type t holds field names to check: a
// struct or a slice of structs (the producer's json.RawMessage is its own).
func nested(t reflect.Type) bool {
	for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice) {
		t = t.Elem()
	}
	return t != nil && t != rawMessage && t.Kind() == reflect.Struct
}

// object checks an object's field names against struct type t.
func (s *jsonScanner) object(t reflect.Type, path string) error {
	fields := fieldsOf(t)
	var seen [8][]byte // requests name few fields: no allocation
	n := 0
	s.i++ // {
	for s.space(); s.i < len(s.b) && s.b[s.i] != '}'; s.space() {
		key := s.key()
		s.space()
		s.i++ // :
		s.space()
		ft, ok := fields[string(key)]
		if !ok {
			for name := range fields {
				if strings.EqualFold(name, string(key)) {
					return webhooks.Errorf(webhooks.EUNKNOWNFIELD, "Unknown field %q: field names are case-sensitive; did you mean %q?", path+string(key), path+name)
				}
			}
			// Only a decoder that refused the field gets here: name it
			// with its path.
			return unknownField(fields, path, string(key))
		}
		for _, k := range seen[:min(n, len(seen))] {
			if bytes.Equal(k, key) {
				return webhooks.Errorf(webhooks.EINVALID, "Field %q is given twice.", path+string(key))
			}
		}
		if n < len(seen) {
			seen[n] = key
		}
		n++
		if !nested(ft) {
			s.skip()
		} else if err := s.value(ft, path+string(key)+"."); err != nil {
			return err
		}
		if s.space(); s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
		}
	}
	s.i++ // }
	return nil
}

// unknownField is the error of key, a field that fields (an object's at
// path) do not have. In an object of one field, such as data and its
// object, an unknown field is most likely content that belongs inside
// that field: say so.
func unknownField(fields map[string]reflect.Type, path, key string) error {
	if len(fields) == 1 && path != "" {
		for only := range fields {
			obj := strings.TrimSuffix(path, ".")
			return webhooks.Errorf(webhooks.EUNKNOWNFIELD, "%s must be {%q: {…}}: found %q directly in %s.", obj, only, key, obj)
		}
	}
	return webhooks.Errorf(webhooks.EUNKNOWNFIELD, "Unknown field %q.", path+key)
}

// key reads an object's key: the string at s.i, unescaped when it holds
// escapes ("\u006eame" is "name" to the decoder).
func (s *jsonScanner) key() []byte {
	start := s.i
	s.skip()
	raw := s.b[start:s.i]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1]
	}
	var k string
	json.Unmarshal(raw, &k)
	return []byte(k)
}

// skip moves past the value at s.i.
func (s *jsonScanner) skip() {
	depth := 0
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '"':
			for s.i++; s.i < len(s.b) && s.b[s.i] != '"'; s.i++ {
				if s.b[s.i] == '\\' {
					s.i++
				}
			}
			s.i++
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				return
			}
			depth--
			s.i++
		case ',', ':':
			if depth == 0 {
				return
			}
			s.i++
		default:
			s.i++
		}
		if depth == 0 && (s.i >= len(s.b) || s.b[s.i-1] == '"' || s.b[s.i-1] == '}' || s.b[s.i-1] == ']') {
			return
		}
	}
}
