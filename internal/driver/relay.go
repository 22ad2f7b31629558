package driver

import (
	"context"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// Relay is what the local relay (SPEC 20, internal/relay) needs of a
// backend: which connection holds a relay endpoint, and the mailbox that
// carries an attempt's request from the process making the attempt to the
// process holding the connection, and the listener's answer back. Both
// may be the same process or two sharing one database; each method is one
// statement or one short transaction.
type Relay interface {
	// ConnectRelay makes session the holder of the endpoint's relay until
	// expires, taking it over from any other session. The requests sent to
	// the session it replaces and not answered are answered with lost.
	ConnectRelay(ctx context.Context, endpointID, session string, expires time.Time, lost webhooks.RelayAnswer) error
	// RenewRelay extends session's hold until expires. It returns false,
	// and changes nothing, when session no longer holds the endpoint (a
	// newer connection took it over, or it was disconnected).
	RenewRelay(ctx context.Context, endpointID, session string, expires time.Time) (bool, error)
	// DisconnectRelay ends session's hold, if it still holds the endpoint,
	// and answers with lost every request sent to session and not
	// answered.
	DisconnectRelay(ctx context.Context, endpointID, session string, lost webhooks.RelayAnswer) error
	// RelaySession returns the session holding the endpoint's relay at now
	// (its hold not expired), or "" when none does.
	RelaySession(ctx context.Context, endpointID string, now time.Time) (string, error)
	// PutRelayRequest stores r, unsent and unanswered.
	PutRelayRequest(ctx context.Context, r *webhooks.RelayRequest) error
	// TakeRelayRequests marks sent to session, and returns, up to limit
	// unsent requests of the endpoint created after since, oldest first. It
	// deletes the endpoint's requests created at or before since: their
	// attempts gave up on them long ago (their process died).
	TakeRelayRequests(ctx context.Context, endpointID, session string, since time.Time, limit int) ([]*webhooks.RelayRequest, error)
	// AnswerRelayRequest stores a as the answer of the endpoint's request
	// id. It returns false, and changes nothing, when the endpoint has no
	// such request still unanswered.
	AnswerRelayRequest(ctx context.Context, endpointID, id string, a webhooks.RelayAnswer) (bool, error)
	// RelayAnswer returns the answer of request id, or nil while it has
	// none (or the request is gone).
	RelayAnswer(ctx context.Context, id string) (*webhooks.RelayAnswer, error)
	// DeleteRelayRequest deletes request id, answered or not.
	DeleteRelayRequest(ctx context.Context, id string) error
}
