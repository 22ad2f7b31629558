package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	webhooks "github.com/factuarea/webhooks"
)

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal_error","message":"Internal error."}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// readBody reads the request body (bounded by MaxBytesReader in handle).
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, webhooks.Errorf(webhooks.ETOOLARGE, "The request body is over %s.", sizeText(tooLarge.Limit))
	}
	if err != nil {
		return nil, webhooks.Errorf(webhooks.EINVALID, "The request body could not be read.")
	}
	return b, nil
}

// sizeText writes a body limit as the documentation does: 256 KiB, 4 MiB.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n>>10, 10) + " KiB"
}

// decode reads a JSON object into v, refusing unknown fields, trailing
// data and wrong types with a message that names the field. An empty body
// is an empty object, so that calls whose fields are all optional need
// none.
func decode(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBytes(b, v)
}

func decodeBytes(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	// JSON is UTF-8; encoding/json would turn what is not into U+FFFD in
	// the fields it decodes, and keep it as it is in data.object, which
	// would then go out as invalid JSON (and PostgreSQL refuses).
	if !utf8.Valid(b) {
		return webhooks.Errorf(webhooks.EINVALIDJSON, "The request body is not valid UTF-8.")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	// Anything but white space after the object is trailing data. (Decoder.More
	// would let a stray '}' or ']' through.)
	if err == nil && len(bytes.TrimSpace(b[dec.InputOffset():])) > 0 {
		err = errors.New("trailing data")
	}
	if err == nil {
		return checkFields(b, v)
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// The body is valid JSON (the decoder checks it all first): the
		// scan names the field with its path.
		if ferr := checkFields(b, v); ferr != nil {
			return ferr
		}
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return webhooks.Errorf(webhooks.EUNKNOWNFIELD, "Unknown field %s.", field)
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return webhooks.Errorf(webhooks.EINVALIDJSON, "The request body must be a JSON object.")
		}
		return webhooks.Errorf(webhooks.EINVALID, "Field %s must be %s, not %s.", typeErr.Field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &syntaxErr):
		// The decoder's offset is the byte it read last, the one at fault.
		msg := strings.TrimPrefix(syntaxErr.Error(), "json: ")
		return webhooks.Errorf(webhooks.EINVALIDJSON, "The request body is not valid JSON: %s, at %s.", msg, position(b, syntaxErr.Offset-1))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return webhooks.Errorf(webhooks.EINVALIDJSON, "The request body is not valid JSON: it ends at %s before the JSON is complete (a missing } or ], or a string left open).", position(b, int64(len(b))))
	case err.Error() == "trailing data":
		at := dec.InputOffset()
		for at < int64(len(b)) && (b[at] == ' ' || b[at] == '\t' || b[at] == '\n' || b[at] == '\r') {
			at++
		}
		return webhooks.Errorf(webhooks.EINVALIDJSON, "The request body is not valid JSON: more follows the object, at %s: send one JSON object.", position(b, at))
	}
	return webhooks.Errorf(webhooks.EINVALIDJSON, "The request body is not valid JSON: %s.", err.Error())
}

// position writes where byte offset of b is, as a person finds it in the
// body: line and column (counted in characters), and the byte offset.
func position(b []byte, offset int64) string {
	offset = max(0, min(offset, int64(len(b))))
	line, col := 1, 1
	for _, r := range string(b[:offset]) {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d (byte %d)", line, col, offset)
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64":
		return "a number"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return goKind
}

// query reads a list's query parameters and refuses unknown ones, so that a
// misspelt filter is an error instead of a silently unfiltered list.
type query struct {
	values url.Values
	err    error
}

func newQuery(r *http.Request, allowed ...string) *query {
	values, err := url.ParseQuery(r.URL.RawQuery)
	q := &query{values: values}
	if err != nil {
		q.fail(webhooks.Errorf(webhooks.EINVALID, "The query string is not valid: %s.", err))
	}
	allowed = append(allowed, "limit", "starting_after")
	for name := range q.values {
		known := false
		for _, a := range allowed {
			known = known || a == name
		}
		if !known {
			q.fail(webhooks.Errorf(webhooks.EUNKNOWNFIELD, "Unknown query parameter %s; this list takes %s.", name, strings.Join(allowed, ", ")))
		}
	}
	return q
}

func (q *query) fail(err error) {
	if q.err == nil {
		q.err = err
	}
}

// page reads limit and starting_after; the use case checks them (a limit
// that is not a number is 0, which it refuses).
func (q *query) page() webhooks.Page {
	p := webhooks.Page{Limit: webhooks.DefaultPageLimit, StartingAfter: q.values.Get("starting_after")}
	if s := q.values.Get("limit"); s != "" {
		p.Limit, _ = strconv.Atoi(s)
	}
	return p
}

func (q *query) str(name string) string { return q.values.Get(name) }

// unix reads a unix-seconds parameter; absent is nil. The use case checks
// its range.
func (q *query) unix(name string) *int64 {
	s := q.values.Get(name)
	if s == "" {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		q.fail(webhooks.Errorf(webhooks.EINVALID, "%s must be a time in unix seconds.", name))
		return nil
	}
	return &n
}

// list is the one shape of every list.
type list[T any] struct {
	Object  string `json:"object"`
	Data    []T    `json:"data"`
	HasMore bool   `json:"has_more"`
}

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// writeList answers a list that takes no filter: the page the query asks
// for, read by get, each item rendered by render.
func writeList[T, U any](w http.ResponseWriter, r *http.Request, get func(webhooks.Page) (*webhooks.List[T], error), render func(T) U) error {
	q := newQuery(r)
	p := q.page()
	if q.err != nil {
		return q.err
	}
	l, err := get(p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newList(l, render))
	return nil
}

func newList[T, U any](l *webhooks.List[T], f func(T) U) list[U] {
	out := list[U]{Object: "list", Data: make([]U, 0, len(l.Data)), HasMore: l.HasMore}
	for _, v := range l.Data {
		out.Data = append(out.Data, f(v))
	}
	return out
}
