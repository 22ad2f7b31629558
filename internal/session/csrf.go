package session

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

// CSRFToken returns the token the forms of session sessionID carry:
// HMAC-SHA256(key, "csrf:" + session id). It is bound to the session, so a
// token taken from another session (or computed without the key) is
// refused, and it needs no storage.
func (s *Signer) CSRFToken(sessionID string) string {
	m := hmac.New(sha256.New, *s.key.Load())
	m.Write([]byte("csrf:" + sessionID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports, in constant time, whether token is sessionID's.
func (s *Signer) CheckCSRF(sessionID, token string) bool {
	want := s.CSRFToken(sessionID)
	return token != "" && hmac.Equal([]byte(token), []byte(want))
}
