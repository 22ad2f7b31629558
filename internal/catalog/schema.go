package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	webhooks "github.com/factuarea/webhooks"
)

// Schema is a compiled JSON Schema of an event type's data.object.
type Schema struct {
	s *jsonschema.Schema
}

// schemaURL is where a compiled schema says it is; nothing is ever loaded
// from it.
const schemaURL = "urn:factuarea:event-type-schema"

// noLoader refuses every reference to a document outside the schema: the
// library's default loader reads local files, and a declaration must not
// make the service read its disk or call the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("references to other documents (%s) are not followed: a schema must be self-contained (use $defs)", url)
}

// Compile compiles an event type's schema (a JSON object, as
// webhooks.EventType.Validate leaves it). A schema without $schema is
// read as JSON Schema 2020-12. Returns EINVALID, with the reason, when it
// is not a JSON Schema.
func Compile(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, webhooks.Errorf(webhooks.EINVALIDJSON, "schema is not valid JSON.")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, webhooks.Errorf(webhooks.EINVALID, "schema is not a JSON Schema: %s.", schemaProblem(err))
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, webhooks.Errorf(webhooks.EINVALID, "schema is not a JSON Schema: %s.", schemaProblem(err))
	}
	return &Schema{s: s}, nil
}

// schemaProblem says what is wrong with a schema that does not compile, in
// the words a person who wrote it reads: where it breaks the metaschema,
// without the library's internal URLs.
func schemaProblem(err error) string {
	var invalid *jsonschema.SchemaValidationError
	if errors.As(err, &invalid) {
		var v *jsonschema.ValidationError
		if errors.As(invalid.Err, &v) {
			leaf := firstLeaf(v)
			return fmt.Sprintf("at %s: %s", pointer("schema", leaf.InstanceLocation), leaf.ErrorKind.LocalizedString(printer))
		}
	}
	var load *jsonschema.LoadURLError
	if errors.As(err, &load) {
		return "references to other documents are not followed: a schema must be self-contained (use $defs)"
	}
	msg := err.Error()
	return strings.ReplaceAll(msg, schemaURL, "schema")
}

// printer writes the library's messages (it localizes them).
var printer = message.NewPrinter(language.English)

// Check reports whether object (JSON) matches the schema of subject (the
// type's name). Returns EINVALIDEVENTDATA naming the first location that
// does not match and why; what names object in the message
// ("data.object", "example").
func (s *Schema) Check(object json.RawMessage, what, subject string) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(object))
	if err != nil {
		return webhooks.Errorf(webhooks.EINVALIDJSON, "%s is not valid JSON.", what)
	}
	err = s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	leaves := countLeaves(ve)
	leaf := firstLeaf(ve)
	more := ""
	if leaves > 1 {
		more = fmt.Sprintf(" (and %d more)", leaves-1)
	}
	return webhooks.Errorf(webhooks.EINVALIDEVENTDATA, "%s does not match the schema of %s: at %s: %s%s.",
		what, subject, pointer(what, leaf.InstanceLocation), leaf.ErrorKind.LocalizedString(printer), more)
}

// firstLeaf returns the first error without causes, depth first: the most
// precise of the reasons (a oneOf reports its branches as causes).
func firstLeaf(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}

func countLeaves(e *jsonschema.ValidationError) int {
	if len(e.Causes) == 0 {
		return 1
	}
	n := 0
	for _, c := range e.Causes {
		n += countLeaves(c)
	}
	return n
}

// pointer writes a location inside root as root followed by its JSON
// pointer: data.object/customer/nif, data.object/lines/0/total.
func pointer(root string, tokens []string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}
