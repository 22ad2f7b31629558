// Package bodycodec is the stored form of a delivery's body: the bytes
// every attempt sends (SPEC 4), kept once per event and rendering.
//
// A body is JSON, most of it the envelope's names, so it is stored
// deflated (RFC 1951) against a preset dictionary of those names when that
// is shorter, behind a marker byte that no JSON body starts with;
// otherwise, and for every body stored before this form existed, as the
// bytes themselves. Decode gives back the exact bytes either way.
//
// The dictionary is part of the stored format: a body deflated with it
// inflates only with the same bytes. A new dictionary takes a new marker,
// and Decode keeps every earlier one.
package bodycodec

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// markerV1 starts a body deflated with dictV1. A JSON text starts with
// whitespace or a value, never with this byte.
const markerV1 = 0x01

// dictV1 holds the envelope's names (webhooks.RenderBody) and common
// values, the most frequent last: deflate codes a match at a shorter
// distance in fewer bits.
var dictV1 = []byte(`"account_relationship":"managed","own","company_id":null,"company_id":"","account":{"id":"` +
	`"object":"invoice","number":"FAC-","total":"","currency":"EUR","customer":{"name":"","nif":"","status":"","lines":[{` +
	`"invoice.created","invoice.updated","invoice.paid","invoice.cancelled","company.updated","account.updated",` +
	`{"id":"","type":"invoice.sent","api_version":"20","created":17,"livemode":false,"test":true,"correlation_id":null,"data":{"type":"invoice.sent","object":{`)

// The fastest level: on a 300-byte envelope it stores about as few bytes
// as the others (107 against 104 at level 5), in a third of the time.
var writers = sync.Pool{New: func() any {
	w, err := flate.NewWriterDict(nil, flate.BestSpeed, dictV1)
	if err != nil {
		panic(err)
	}
	return w
}}

var readers = sync.Pool{New: func() any { return flate.NewReaderDict(bytes.NewReader(nil), dictV1) }}

// Encode returns the stored form of body.
func Encode(body []byte) []byte {
	if len(body) == 0 {
		return body
	}
	var b bytes.Buffer
	b.Grow(len(body)/2 + 16)
	b.WriteByte(markerV1)
	w := writers.Get().(*flate.Writer)
	defer writers.Put(w)
	w.Reset(&b)
	// Writes to a bytes.Buffer do not fail.
	w.Write(body)
	w.Close()
	// A body that starts with the marker (never a JSON one) is stored
	// deflated even when that is longer: as it is, it would read as
	// deflated.
	if b.Len() >= len(body) && body[0] != markerV1 {
		return body
	}
	return b.Bytes()
}

// Decode returns the body whose stored form is stored.
func Decode(stored []byte) ([]byte, error) {
	if len(stored) == 0 || stored[0] != markerV1 {
		return stored, nil
	}
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(stored[1:]), dictV1); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("bodycodec: a stored body does not inflate: %w", err)
	}
	return body, nil
}

// Column scans a body in its stored form from a database (a
// database/sql Scanner, which pgx honours too), NULL as none.
type Column []byte

// Scan implements sql.Scanner.
func (c *Column) Scan(src any) error {
	switch s := src.(type) {
	case nil:
		*c = nil
		return nil
	case string: // written as text by hand, not by a store
		*c = []byte(s)
		return nil
	case []byte:
		body, err := Decode(s)
		// The driver may reuse src's bytes after Scan; a decoded body
		// is new.
		if len(body) > 0 && &body[0] == &s[0] {
			body = bytes.Clone(body)
		}
		*c = body
		return err
	default:
		return fmt.Errorf("bodycodec: a body stored as %T", src)
	}
}
