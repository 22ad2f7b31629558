package portal

import (
	"context"
	"net/http"
	"net/url"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// What the portal says around a send by hand: what became of a delivery's
// replays, the question before sending an event again that already
// arrived, and what a retry, replay or test event did.

// replayed reads what became of d's replays, for a failed delivery of a
// company endpoint (account endpoints retry the delivery itself): nil
// when it has none.
func (h *Handler) replayed(ctx context.Context, ep *webhooks.Endpoint, d *webhooks.Delivery, c *reqCtx) (*ReplayedView, error) {
	if ep.Scope != webhooks.ScopeCompany || !d.Resendable() {
		return nil, nil
	}
	sameEvent, err := h.cfg.App.EndpointEventDeliveries(ctx, ep, []*webhooks.Delivery{d})
	if err != nil {
		return nil, err
	}
	return replayedView(d, sameEvent[d.EventID], c.now, c.words), nil
}

// ConfirmResendPage asks before replaying an event that a replay already
// delivered, or is sending.
type ConfirmResendPage struct {
	Base
	Endpoint EndpointView
	Delivery DeliveryRow
	Replayed *ReplayedView
	Action   string // where the confirmed form posts
	Cancel   string
	Label    string // "Replay"
}

// handleConfirmResend shows the question, or, when there is nothing to
// confirm (no replay delivered or under way), the delivery.
func (h *Handler) handleConfirmResend(w http.ResponseWriter, r *http.Request, c *reqCtx) error {
	oe, d, replayed, err := h.resendTarget(r, c)
	if err != nil {
		return err
	}
	path := deliveryPath(oe.ID, d.ID)
	if replayed == nil || !replayed.Confirm {
		return redirect(w, r, path, nil)
	}
	h.render(w, r, c, http.StatusOK, "confirm_resend", &ConfirmResendPage{
		Base:     Base{Title: "Replay again?", Nav: "endpoints"},
		Endpoint: h.endpointView(r.Context(), oe.Endpoint, oe.Company, c.now), Delivery: deliveryRow(d, oe.Scope, nil, c.now, c.words),
		Replayed: replayed, Action: path + "/resend", Cancel: path, Label: resendLabel(oe.Scope),
	})
	return nil
}

// needsConfirm reports whether a resend of the delivery must be confirmed
// first, and where that is asked.
func (h *Handler) needsConfirm(r *http.Request, c *reqCtx) (string, bool, error) {
	oe, d, replayed, err := h.resendTarget(r, c)
	if err != nil || replayed == nil || !replayed.Confirm {
		return "", false, err
	}
	return deliveryPath(oe.ID, d.ID) + "/resend", true, nil
}

// resendTarget reads the delivery the request names, on its endpoint, and
// what became of its replays (see replayed).
func (h *Handler) resendTarget(r *http.Request, c *reqCtx) (*app.OwnedEndpoint, *webhooks.Delivery, *ReplayedView, error) {
	oe, d, err := h.cfg.App.Delivery(r.Context(), c.caller, endpointRef(r), r.PathValue("delivery"))
	if err != nil {
		return nil, nil, nil, err
	}
	replayed, err := h.replayed(r.Context(), oe.Endpoint, d, c)
	return oe, d, replayed, err
}

// sendOutcome sets the page's message after a send by hand (the notice
// of the redirect that ends one), from what became of the delivery since:
// sent and not yet answered (the page reloads itself a while, until it
// is), delivered, or failed, in the error style and saying how.
func (p *DeliveryPage) sendOutcome(notice string, d *webhooks.Delivery, last *webhooks.Attempt, now time.Time, w words) {
	if notice == "rehearsal_started" {
		p.Info = "Outage rehearsal started: this ping follows the whole retry schedule, " + w.Attempts + ", compressed into about ten minutes, " +
			"each recorded below. Keep your receiver down to watch the retries and the exhaustion (and the operational events your platform gets), " +
			"then bring it back and use Recover on the endpoint's page."
		return
	}
	what := map[string]string{"retried": "Retry", "replayed": "Replay", "test_sent": "Test event"}[notice]
	if what == "" {
		return
	}
	// A send by hand is pending and marked manual until its attempt is
	// recorded; a test event is a new delivery on the schedule.
	waiting := d.Status == webhooks.DeliveryPending && (d.Manual || (notice == "test_sent" && d.AttemptCount == 0))
	switch {
	case waiting:
		p.Info = map[string]string{
			"retried":   "Retry sent: the same delivery makes one attempt now.",
			"replayed":  "Replay sent: this new delivery, with the same event id and body, makes one attempt now.",
			"test_sent": "Test event sent: a ping event with test: true, to this endpoint alone.",
		}[notice] + " This page shows its answer when it comes; reload it if it does not."
		if now.Sub(d.NextAttemptAt) < sendWatch {
			p.Refresh = 2
		}
	case d.Reason == webhooks.ReasonEndpointDisabled || d.Reason == webhooks.ReasonEndpointDeleted:
		p.Error = what + " not attempted. " + reasonText(d.Reason, w)
	case d.Status == webhooks.DeliveryDelivered:
		p.Notice = what + " delivered to your endpoint: " + answerText(last) + "."
	case d.Status == webhooks.DeliveryPending:
		p.Error = what + " attempted: " + answerText(last) + ". It is retried on the schedule."
	default:
		p.Error = what + " attempted: " + answerText(last) + "."
	}
}

// sendWatch is how long after a send by hand its page reloads itself to
// show the answer: longer than an attempt's timeout, so that a slow
// endpoint's answer shows too, but not forever if the engine is behind.
const sendWatch = 30 * time.Second

// confirmed reports whether the resend form says it was confirmed.
func confirmed(f url.Values) bool { return f.Get("confirm") == "yes" }
