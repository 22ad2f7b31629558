package client

import (
	"context"
	"iter"
	"net/url"
)

// CreateAccount creates an account (POST /v1/accounts; admin key).
//
// It carries no idempotency key: it is sent again only when the service
// cannot have acted on the attempt (the connection failed before the
// request was written, or the answer was 429 or 503). After a timeout the
// account may exist: look before creating another.
func (c *Client) CreateAccount(ctx context.Context, in AccountInput) (*Account, error) {
	var a Account
	if err := c.post(ctx, "/v1/accounts", in, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// GetAccount returns an account (GET /v1/accounts/{account}).
func (c *Client) GetAccount(ctx context.Context, accountID string) (*Account, error) {
	p, err := id("account", accountID)
	if err != nil {
		return nil, err
	}
	var a Account
	if err := c.get(ctx, "/v1/accounts/"+p, nil, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// CreateCompany creates a company (POST /v1/companies; admin key). It is
// retried as CreateAccount is; a NIF is unique, so a second registration
// of one answers 409 CodeNIFTaken rather than making a second company.
func (c *Client) CreateCompany(ctx context.Context, in CompanyInput) (*Company, error) {
	var co Company
	if err := c.post(ctx, "/v1/companies", in, &co); err != nil {
		return nil, err
	}
	return &co, nil
}

// GetCompany returns a company (GET /v1/companies/{company}).
func (c *Client) GetCompany(ctx context.Context, companyID string) (*Company, error) {
	p, err := id("company", companyID)
	if err != nil {
		return nil, err
	}
	var co Company
	if err := c.get(ctx, "/v1/companies/"+p, nil, &co); err != nil {
		return nil, err
	}
	return &co, nil
}

// CreateEndpoint creates a webhook endpoint of a company or an account
// (POST …/webhook_endpoints) and returns it with its Secret, which this
// answer alone carries. It is retried as CreateAccount is.
func (c *Client) CreateEndpoint(ctx context.Context, owner Owner, in EndpointInput) (*Endpoint, error) {
	base, err := owner.path()
	if err != nil {
		return nil, err
	}
	var ep Endpoint
	if err := c.post(ctx, base+"/webhook_endpoints", in, &ep); err != nil {
		return nil, err
	}
	return &ep, nil
}

// GetEndpoint returns a webhook endpoint of a company or an account
// (GET …/webhook_endpoints/{endpoint}), without its secret.
func (c *Client) GetEndpoint(ctx context.Context, owner Owner, endpointID string) (*Endpoint, error) {
	path, err := endpointPath(owner, endpointID)
	if err != nil {
		return nil, err
	}
	var ep Endpoint
	if err := c.get(ctx, path, nil, &ep); err != nil {
		return nil, err
	}
	return &ep, nil
}

// endpointPath is …/webhook_endpoints/{endpoint} under owner.
func endpointPath(owner Owner, endpointID string) (string, error) {
	base, err := owner.path()
	if err != nil {
		return "", err
	}
	p, err := id("endpoint", endpointID)
	if err != nil {
		return "", err
	}
	return base + "/webhook_endpoints/" + p, nil
}

// DeliveryListParams filters and pages an endpoint's deliveries. The zero
// value lists them all, newest first.
type DeliveryListParams struct {
	// Status keeps the deliveries in this state: pending, delivered,
	// failed or failed_permanently.
	Status string
	// EventID keeps the deliveries of this event.
	EventID string
	// Limit is the page size, 1 to 100; 0: the service's default (20).
	Limit int
	// StartingAfter starts the list after the delivery with this id.
	StartingAfter string
}

func (p *DeliveryListParams) query() url.Values {
	q := url.Values{}
	if p == nil {
		return q
	}
	if p.Status != "" {
		q.Set("status", p.Status)
	}
	if p.EventID != "" {
		q.Set("event_id", p.EventID)
	}
	pageQuery(q, p.Limit, p.StartingAfter)
	return q
}

// ListDeliveriesPage returns one page of an endpoint's deliveries
// (GET …/webhook_endpoints/{endpoint}/deliveries), newest first, without
// their attempts.
func (c *Client) ListDeliveriesPage(ctx context.Context, owner Owner, endpointID string, params *DeliveryListParams) (*List[Delivery], error) {
	path, err := endpointPath(owner, endpointID)
	if err != nil {
		return nil, err
	}
	var l List[Delivery]
	if err := c.get(ctx, path+"/deliveries", params.query(), &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// ListDeliveries walks an endpoint's deliveries, newest first, page after
// page, as ListEvents walks events: an error ends the walk, yielded once
// with a nil delivery. Hold a receiver's table of processed event ids
// against it for the time the receiver was down.
func (c *Client) ListDeliveries(ctx context.Context, owner Owner, endpointID string, params *DeliveryListParams) iter.Seq2[*Delivery, error] {
	p := DeliveryListParams{}
	if params != nil {
		p = *params
	}
	return paginate(p.StartingAfter, func(after string) (*List[Delivery], error) {
		p.StartingAfter = after
		return c.ListDeliveriesPage(ctx, owner, endpointID, &p)
	}, func(d *Delivery) string { return d.ID })
}

// GetDelivery returns a delivery with its attempts
// (GET …/webhook_endpoints/{endpoint}/deliveries/{delivery}).
func (c *Client) GetDelivery(ctx context.Context, owner Owner, endpointID, deliveryID string) (*Delivery, error) {
	path, err := endpointPath(owner, endpointID)
	if err != nil {
		return nil, err
	}
	p, err := id("delivery", deliveryID)
	if err != nil {
		return nil, err
	}
	var d Delivery
	if err := c.get(ctx, path+"/deliveries/"+p, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}
