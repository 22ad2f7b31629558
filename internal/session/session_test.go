package session

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

var sessionT0 = time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)

func TestSigner_Issue(t *testing.T) {
	s := NewSigner("admin-key")
	account := webhooks.NewID()
	token, expires := s.Issue(account, sessionT0)
	if want := sessionT0.Add(time.Hour); !expires.Equal(want) {
		t.Errorf("expires: got %s, want %s", expires, want)
	}
	sess, err := s.VerifyLink(token, sessionT0.Add(59*time.Minute))
	if err != nil {
		t.Fatalf("VerifyLink: %v", err)
	}
	if sess.AccountID != account || !webhooks.ValidID(sess.ID) || !sess.Expires.Equal(expires) {
		t.Errorf("session: got %+v, want account %s, a session id, expiry %s", sess, account, expires)
	}
	// A process with the same secret accepts it: nothing is stored.
	if _, err := NewSigner("admin-key").VerifyLink(token, sessionT0); err != nil {
		t.Errorf("another process's Signer: got %v, want the link accepted", err)
	}
	// Two links are two sessions.
	other, _ := s.Issue(account, sessionT0)
	sess2, _ := s.VerifyLink(other, sessionT0)
	if sess2.ID == sess.ID {
		t.Errorf("two links share session id %s", sess.ID)
	}
	if strings.ContainsAny(token, "+/=") {
		t.Errorf("token %q is not URL-safe", token)
	}
}

func TestSigner_Expiry(t *testing.T) {
	s := NewSigner("admin-key")
	token, expires := s.Issue(webhooks.NewID(), sessionT0)
	for _, tc := range []struct {
		name string
		now  time.Time
		want error
	}{
		{"just issued", sessionT0, nil},
		{"last second", expires.Add(-time.Second), nil},
		{"at expiry", expires, ErrExpired},
		{"a day later", expires.Add(24 * time.Hour), ErrExpired},
	} {
		if _, err := s.VerifyLink(token, tc.now); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
		sess, _ := s.VerifyLink(token, sessionT0)
		if _, err := s.VerifyCookie(s.Cookie(sess), tc.now); !errors.Is(err, tc.want) {
			t.Errorf("%s, cookie: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestSigner_Tampering(t *testing.T) {
	s := NewSigner("admin-key")
	accountA, accountB := webhooks.NewID(), webhooks.NewID()
	token, _ := s.Issue(accountA, sessionT0)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		t.Fatal(err)
	}
	// Every single bit flipped, in the payload or the MAC, is refused.
	for i := range raw {
		for bit := range 8 {
			b := append([]byte(nil), raw...)
			b[i] ^= 1 << bit
			if _, err := s.VerifyLink(base64.RawURLEncoding.EncodeToString(b), sessionT0); !errors.Is(err, ErrInvalid) {
				t.Fatalf("byte %d bit %d flipped: got %v, want ErrInvalid", i, bit, err)
			}
		}
	}
	// Another account's id put in place of the signed one.
	sess, _ := s.VerifyLink(token, sessionT0)
	forged := []byte(s.sign(purposeLink, Session{AccountID: accountB, ID: sess.ID, Expires: sess.Expires}))
	forgedRaw, _ := base64.RawURLEncoding.DecodeString(string(forged))
	copy(forgedRaw[payloadLen:], raw[payloadLen:]) // keep A's MAC
	if _, err := s.VerifyLink(base64.RawURLEncoding.EncodeToString(forgedRaw), sessionT0); !errors.Is(err, ErrInvalid) {
		t.Errorf("account swapped: got %v, want ErrInvalid", err)
	}
	// A later expiry with the old MAC.
	longer := s.sign(purposeLink, Session{AccountID: accountA, ID: sess.ID, Expires: sess.Expires.Add(24 * time.Hour)})
	longerRaw, _ := base64.RawURLEncoding.DecodeString(longer)
	copy(longerRaw[payloadLen:], raw[payloadLen:])
	if _, err := s.VerifyLink(base64.RawURLEncoding.EncodeToString(longerRaw), sessionT0); !errors.Is(err, ErrInvalid) {
		t.Errorf("expiry extended: got %v, want ErrInvalid", err)
	}

	for _, tc := range []struct{ name, token string }{
		{"empty", ""},
		{"garbage", "not-a-token"},
		{"truncated", token[:len(token)-1]},
		{"extended", token + "A"},
		{"padding", token + "=="},
		{"bad base64", strings.Repeat("*", len(token))},
	} {
		if _, err := s.VerifyLink(tc.token, sessionT0); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", tc.name, err)
		}
	}
}

func TestSigner_WrongKey(t *testing.T) {
	token, _ := NewSigner("admin-key").Issue(webhooks.NewID(), sessionT0)
	if _, err := NewSigner("another-admin-key").VerifyLink(token, sessionT0); !errors.Is(err, ErrInvalid) {
		t.Errorf("another admin key: got %v, want ErrInvalid", err)
	}
}

// A link is not a cookie and a cookie is not a link: each is signed for
// its purpose.
// TestSigner_SetSecret: after a rotation of the cluster's portal key, the
// tokens and CSRF tokens signed before are refused as invalid, not as
// expired, and new ones verify.
func TestSigner_SetSecret(t *testing.T) {
	s := NewSigner("portal-key-1")
	account := webhooks.NewID()
	before, _ := s.Issue(account, sessionT0)
	sess, err := s.VerifyLink(before, sessionT0)
	if err != nil {
		t.Fatal(err)
	}
	cookie, csrf := s.Cookie(sess), s.CSRFToken(sess.ID)
	s.SetSecret("portal-key-2")
	if _, err := s.VerifyLink(before, sessionT0); !errors.Is(err, ErrInvalid) {
		t.Errorf("a link signed before SetSecret: got %v, want ErrInvalid", err)
	}
	if _, err := s.VerifyCookie(cookie, sessionT0); !errors.Is(err, ErrInvalid) {
		t.Errorf("a cookie signed before SetSecret: got %v, want ErrInvalid", err)
	}
	if s.CheckCSRF(sess.ID, csrf) {
		t.Errorf("a CSRF token signed before SetSecret was accepted")
	}
	after, _ := s.Issue(account, sessionT0)
	if _, err := s.VerifyLink(after, sessionT0); err != nil {
		t.Errorf("a link signed after SetSecret: %v", err)
	}
	if _, err := NewSigner("portal-key-2").VerifyLink(after, sessionT0); err != nil {
		t.Errorf("another process with the new secret: %v", err)
	}
}

func TestSigner_Purpose(t *testing.T) {
	s := NewSigner("admin-key")
	token, _ := s.Issue(webhooks.NewID(), sessionT0)
	if _, err := s.VerifyCookie(token, sessionT0); !errors.Is(err, ErrInvalid) {
		t.Errorf("link as cookie: got %v, want ErrInvalid", err)
	}
	sess, _ := s.VerifyLink(token, sessionT0)
	cookie := s.Cookie(sess)
	if _, err := s.VerifyLink(cookie, sessionT0); !errors.Is(err, ErrInvalid) {
		t.Errorf("cookie as link: got %v, want ErrInvalid", err)
	}
	got, err := s.VerifyCookie(cookie, sessionT0)
	if err != nil || got != sess {
		t.Errorf("cookie: got %+v, %v, want %+v", got, err, sess)
	}
}

func TestSigner_CSRF(t *testing.T) {
	s := NewSigner("admin-key")
	a, b := webhooks.NewID(), webhooks.NewID()
	tokenA := s.CSRFToken(a)
	if tokenA == s.CSRFToken(b) {
		t.Fatal("two sessions share a CSRF token")
	}
	if tokenA != NewSigner("admin-key").CSRFToken(a) {
		t.Error("another process computes another CSRF token for the same session")
	}
	for _, tc := range []struct {
		name, session, token string
		want                 bool
	}{
		{"own token", a, tokenA, true},
		{"another session's", b, tokenA, false},
		{"missing", a, "", false},
		{"truncated", a, tokenA[:len(tokenA)-1], false},
		{"another key's", a, NewSigner("other").CSRFToken(a), false},
	} {
		if got := s.CheckCSRF(tc.session, tc.token); got != tc.want {
			t.Errorf("%s: got %t, want %t", tc.name, got, tc.want)
		}
	}
}
