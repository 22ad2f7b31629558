// Package session signs what opens the customer portal and keeps it open:
// the one-hour links the platform asks for, the session cookies they set,
// and the CSRF tokens of the portal's forms. Nothing is stored: a token
// carries its account, session id and expiry under an HMAC, so every
// process that shares the signing secret (the cluster's portal key, kept
// in the database) accepts every other's.
package session

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	webhooks "github.com/factuarea/webhooks"
)

// Lifetime is how long a portal link, and the session it opens, lasts.
const Lifetime = time.Hour

// Errors of VerifyLink and VerifyCookie.
var (
	// ErrInvalid: the token is malformed, tampered with, or signed with
	// another key (another service's or cluster's, one from before a
	// rotation of the admin key, or a link used as a cookie).
	ErrInvalid = errors.New("session: invalid token")
	// ErrExpired: the token was genuine but its hour is over.
	ErrExpired = errors.New("session: expired")
)

// Token purposes: a link and a cookie carry the same session but are never
// accepted in place of each other.
const (
	purposeLink   byte = 'L'
	purposeCookie byte = 'C'
)

// tokenVersion lets the format change without accepting old tokens in a
// new meaning.
const tokenVersion byte = 1

// payloadLen is version, purpose, account id, session id and expiry.
const payloadLen = 1 + 1 + 16 + 16 + 8

// Signer issues and checks portal links, session cookies and CSRF tokens,
// under a key derived from a secret: the cluster's portal key, which a
// rotation of the admin key replaces, ending every session.
type Signer struct {
	key atomic.Pointer[[]byte]
}

// NewSigner returns a Signer whose key is derived from secret.
func NewSigner(secret string) *Signer {
	s := &Signer{}
	s.SetSecret(secret)
	return s
}

// SetSecret derives the signing key from secret from now on:
// HMAC-SHA256(secret, "portal-session"), so that a portal token can never
// be mistaken for anything else signed with the secret. Tokens signed
// with the previous secret are refused (ErrInvalid).
func (s *Signer) SetSecret(secret string) {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("portal-session"))
	key := m.Sum(nil)
	s.key.Store(&key)
}

// Session is a verified portal session: the account it shows and its id,
// which the audit log records as the actor.
type Session struct {
	AccountID string
	ID        string
	Expires   time.Time
}

// Issue returns a link token for a new session of accountID, valid for
// Lifetime from now, and when it expires. accountID must be an
// account id (a canonical UUID); anything else is a programmer error.
func (s *Signer) Issue(accountID string, now time.Time) (token string, expires time.Time) {
	expires = now.Add(Lifetime).Truncate(time.Second)
	sess := Session{AccountID: accountID, ID: webhooks.NewID(), Expires: expires}
	return s.sign(purposeLink, sess), expires
}

// Cookie returns the session cookie's value for sess.
func (s *Signer) Cookie(sess Session) string { return s.sign(purposeCookie, sess) }

// VerifyLink checks a link token at now.
func (s *Signer) VerifyLink(token string, now time.Time) (Session, error) {
	return s.verify(purposeLink, token, now)
}

// VerifyCookie checks a session cookie's value at now.
func (s *Signer) VerifyCookie(value string, now time.Time) (Session, error) {
	return s.verify(purposeCookie, value, now)
}

func (s *Signer) sign(purpose byte, sess Session) string {
	account := uuid.MustParse(sess.AccountID)
	id := uuid.MustParse(sess.ID)
	b := make([]byte, 0, payloadLen+sha256.Size)
	b = append(b, tokenVersion, purpose)
	b = append(b, account[:]...)
	b = append(b, id[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(sess.Expires.Unix()))
	b = append(b, s.mac(b)...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Signer) verify(purpose byte, token string, now time.Time) (Session, error) {
	if len(token) != base64.RawURLEncoding.EncodedLen(payloadLen+sha256.Size) {
		return Session{}, ErrInvalid
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) != payloadLen+sha256.Size {
		return Session{}, ErrInvalid
	}
	payload, mac := b[:payloadLen], b[payloadLen:]
	// The MAC is checked first, in constant time, and covers the purpose
	// and version bytes: nothing in an unsigned token is looked at.
	if !hmac.Equal(mac, s.mac(payload)) || payload[0] != tokenVersion || payload[1] != purpose {
		return Session{}, ErrInvalid
	}
	var account, id uuid.UUID
	copy(account[:], payload[2:18])
	copy(id[:], payload[18:34])
	sess := Session{
		AccountID: account.String(),
		ID:        id.String(),
		Expires:   time.Unix(int64(binary.BigEndian.Uint64(payload[34:42])), 0),
	}
	if !now.Before(sess.Expires) {
		return Session{}, ErrExpired
	}
	return sess, nil
}

func (s *Signer) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, *s.key.Load())
	m.Write(payload)
	return m.Sum(nil)
}
