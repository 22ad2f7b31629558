package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	webhooks "github.com/factuarea/webhooks"
)

// principal is the caller: the admin, or one account through its key.
type principal struct {
	admin     bool
	accountID string
	actor     webhooks.Actor
}

// hashKey is how keys are compared and stored: API keys are 32 random
// bytes, so a fast hash is enough (no brute force can walk that space).
func hashKey(key string) [32]byte { return sha256.Sum256([]byte(key)) }

// authenticate resolves the Bearer key. The admin key is compared in
// constant time; an account key is found by its hash, so the key itself is
// never stored or compared.
func (s *Server) authenticate(r *http.Request) (*principal, error) {
	auth := r.Header.Get("Authorization")
	key, ok := strings.CutPrefix(auth, "Bearer ")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return nil, webhooks.Errorf(webhooks.EUNAUTHORIZED, "Send your API key as Authorization: Bearer <key>.")
	}
	h := hashKey(key)
	if subtle.ConstantTimeCompare(h[:], s.adminHash[:]) == 1 && s.AdminKey != "" {
		return &principal{admin: true, actor: webhooks.Actor{Type: webhooks.ActorAdmin}}, nil
	}
	k, err := s.Store.FindAPIKey(r.Context(), h[:])
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
		return nil, webhooks.Errorf(webhooks.EUNAUTHORIZED, "The API key is not valid (unknown or revoked).")
	} else if err != nil {
		return nil, err
	}
	return &principal{accountID: k.AccountID, actor: webhooks.Actor{Type: webhooks.ActorAPIKey, ID: k.ID}}, nil
}

// requireAdmin refuses account keys on the platform's routes.
func requireAdmin(p *principal) error {
	if !p.admin {
		return webhooks.Errorf(webhooks.EFORBIDDEN, "This route needs the platform's admin key.")
	}
	return nil
}

// canSee reports whether p may see what belongs to accountID.
func (p *principal) canSee(accountID string) bool {
	return p.admin || p.accountID == accountID
}

// audit returns the audit entry of a change p makes.
func (p *principal) audit() *webhooks.AuditEntry {
	return &webhooks.AuditEntry{Actor: p.actor}
}

// notFound answers exactly what a missing object answers, for another
// tenant's object too.
func notFound(kind string) error {
	return webhooks.Errorf(webhooks.ENOTFOUND, "No such %s.", kind)
}
