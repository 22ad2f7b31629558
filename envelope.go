package webhooks

import (
	"bytes"
	"strconv"
)

// RenderBody returns the body a delivery of ev to ep sends: the company
// envelope, or for an account endpoint the account envelope of relationship
// rel, in the endpoint's payload version, as compact JSON with the fields in
// the spec's order. It is called once, when the delivery is created.
//
// The account envelope's account is ev.AccountID, the account the event
// belongs to: the endpoint's own for "own", the managed account's for
// "managed".
func RenderBody(ev *Event, ep *Endpoint, rel Relationship) ([]byte, error) {
	data, err := RenderData(ev, ep.APIVersion)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(256 + len(data))
	b.WriteString(`{"id":`)
	writeJSONString(&b, ev.ID)
	b.WriteString(`,"type":`)
	writeJSONString(&b, ev.Type)
	b.WriteString(`,"api_version":`)
	writeJSONString(&b, ep.APIVersion)
	b.WriteString(`,"created":`)
	b.WriteString(strconv.FormatInt(ev.Created.Unix(), 10))
	b.WriteString(`,"livemode":`)
	b.WriteString(strconv.FormatBool(ev.Livemode))
	b.WriteString(`,"test":`)
	b.WriteString(strconv.FormatBool(ev.Test))
	b.WriteString(`,"correlation_id":`)
	writeNullableString(&b, ev.CorrelationID)
	if ep.Scope == ScopeAccount {
		b.WriteString(`,"account":{"id":`)
		writeJSONString(&b, ev.AccountID)
		b.WriteString(`},"account_relationship":`)
		writeJSONString(&b, string(rel))
		b.WriteString(`,"company_id":`)
		writeNullableString(&b, ev.CompanyID)
	}
	b.WriteString(`,"data":`)
	b.Write(data)
	b.WriteByte('}')
	return b.Bytes(), nil
}

func writeNullableString(b *bytes.Buffer, s string) {
	if s == "" {
		b.WriteString("null")
		return
	}
	writeJSONString(b, s)
}
