// Package client is a Go client of the Factuarea webhook service's API: for
// the platform that registers events (the producer), and for whoever reads
// the event logs and the delivery histories. It depends on the standard
// library only, so a producer imports it without the service.
//
//	c, err := client.New("https://webhooks.example.com", os.Getenv("WEBHOOKS_ADMIN_KEY"))
//	…
//	ev, err := c.CreateEvent(ctx, client.EventInput{
//		Type:      "invoice.sent",
//		CompanyID: companyID,
//		Data:      client.EventInputData{Object: invoiceJSON},
//	}, client.WithIdempotencyKey("FAC-2026-00042-sent"))
//
// # Registering an event once
//
// An event must be registered once: every receiver deduplicates by its id,
// and a second registration is a second event, with another id, that they
// all process again (an invoice sent twice). The service makes
// registration idempotent: POST /v1/events with an Idempotency-Key used in
// the last 24 hours answers 200 with the event registered the first time
// and registers nothing; the same key with another event answers 409
// idempotency_key_reused.
//
// [Client.CreateEvent] always sends a key, and the same key on every
// attempt of the call. When an attempt's answer is lost (a timeout, a
// connection reset after the service committed), the retry gets the first
// attempt's event back, and the event stays registered once. The key is:
//
//   - the one given with [WithIdempotencyKey], or else
//   - [EventInput.IdempotencyKey], or else
//   - a random one ([NewIdempotencyKey]) made for this call.
//
// A random key covers the call's own retries. To cover a registration that
// your process sends again after a crash or a restart, derive the key from
// your own data ("FAC-2026-00042-sent": the invoice and what happened to
// it), or make one with NewIdempotencyKey and store it with the event
// before you send it.
//
// # What is retried
//
// A call is sent again, with the same body and key, after a failure that
// another attempt may cure, when sending it again is safe:
//
//	failure of an attempt                         retried
//	connection error before the request was sent  always (the service saw nothing)
//	connection error or timeout after it was sent  only an idempotent call
//	429, 503                                      always (after Retry-After, if given)
//	408, 500, 502, 504                            only an idempotent call
//	any other status (400, 401, 404, 409, 422 …)  never
//
// An idempotent call is a read (GET) or a registration: CreateEvent, and
// CreateEvents, whose every event carries a key. Sending one again has no
// effect beyond the first's. The calls that create accounts, companies
// and endpoints carry no key: a timeout after the request was sent may
// have created the object, so they are not retried then, and the error
// says what happened (a company's NIF is unique, so a second attempt would
// answer 409 nif_taken anyway). A 503 is retried on every call: the
// service answers it, with Retry-After, when it cannot reach its database,
// and has done nothing.
//
// The wait before each retry is what Retry-After asks for (seconds or an
// HTTP date, capped by [RetryPolicy.MaxRetryAfter], plus up to a tenth so
// that many clients do not come back at once), or else an exponential
// backoff with jitter from [RetryPolicy.BaseDelay] up to
// [RetryPolicy.MaxDelay]. A call makes at most [RetryPolicy.MaxAttempts]
// attempts within [RetryPolicy.MaxElapsed], each bounded by the attempt
// timeout ([WithAttemptTimeout]). The context bounds everything: a call
// returns when it ends, and does not begin a wait that would end after its
// deadline. When the budget ends, the call returns the last attempt's
// error, wrapped ("gave up after 5 attempts: …").
//
// After a call with a key that ended in a connection error or a timeout,
// the event may or may not be registered: send it again with the same key
// to know.
//
// # Many events at once
//
// [Client.CreateEvents] registers a list of events through POST
// /v1/events/batch, in batches of at most [MaxBatchEvents] (and 4 MiB),
// one after the other. Each event has its own key (its IdempotencyKey or
// a random one), the same on every retry of its batch, and each is
// registered or refused on its own: the call returns one
// [BatchItemResult] per event, in the order given, with the status POST
// /v1/events would have answered it and the event, or an [*Error]. Events
// the service answered 503 while it registered the others are sent again
// within the batch's retry budget. When a batch fails as a whole, the call
// returns an error and the results so far; the events whose outcome is not
// known have Status 0, and each result has the IdempotencyKey to send it
// again with.
//
// # Errors
//
// The API's refusals are [*Error] values: the HTTP status, one of the Code
// constants ([CodeIdempotencyKeyReused], [CodeUnknownCompany],
// [CodeUnknownEventType], [CodeInvalidEventData], [CodeNotFound],
// [CodeUnauthorized], [CodeServiceUnavailable], …) and the service's
// message. Reach one with [errors.As], or test the code with [IsCode] and
// the status with [StatusCode]; both see through the wrapping of a call
// that gave up after retries. A cancelled context is reported with the
// context's error ([errors.Is](err, context.Canceled)).
//
// # Reading
//
// [Client.GetEvent], [Client.GetAccount], [Client.GetCompany],
// [Client.GetEndpoint] and [Client.GetDelivery] read one object.
// [Client.ListEvents] (a company's event log or an account's) and
// [Client.ListDeliveries] (an endpoint's history) are iterators that walk
// every page, following the starting_after cursor until has_more is false:
//
//	for ev, err := range c.ListEvents(ctx, client.CompanyOwner(companyID), nil) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(ev.ID, ev.Type)
//	}
//
// The Page variants ([Client.ListEventsPage], [Client.ListDeliveriesPage])
// return one page, for a caller that keeps its own cursor. Lists are newest
// first; events registered during a walk are newer than its cursor, so a
// walk lists every event that existed when it began exactly once.
//
// # Tests
//
// [WithSleep] and [WithClock] replace the client's waits and its clock, so
// that a test observes the retries without waiting for them;
// [WithHTTPClient] takes any transport.
package client
