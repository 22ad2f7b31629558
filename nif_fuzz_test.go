package webhooks_test

import (
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

// FuzzNormalizeNIF checks that NormalizeNIF never panics, and that what it
// accepts is canonical: 9 characters of [0-9A-Z], normalizing it again gives
// itself, and another control character makes it invalid (except for the
// CIFs that take the control as a digit or as its letter, whose one twin
// stays valid).
func FuzzNormalizeNIF(f *testing.F) {
	for _, seed := range []string{
		// Valid, one of each kind.
		"12345678Z", // DNI
		"X1234567L", // NIE
		"Y1234567X",
		"Z1234567R",
		"K1234567L", // K, L, M
		"B12345674", // CIF, digit control
		"P1234567D", // CIF, letter control
		"C12345674", // CIF, either
		"C1234567D",
		// Valid once normalized.
		"12345678z",
		" x-1234567-l ",
		"12.345.678-Z",
		// Invalid.
		"",
		"12345678A",
		"B1234567D",
		"P12345674",
		"I1234567D",
		"1234567Z",
		"123456789Z",
		"B1234567Ñ",
		"ſ1234567D", // long s, which upper-cases to S
		"\xff1234567D",
		"12345678\xff",
	} {
		f.Add(seed)
	}
	const controls = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	f.Fuzz(func(t *testing.T, in string) {
		n, err := webhooks.NormalizeNIF(in)
		if err != nil {
			if n != "" {
				t.Errorf("NormalizeNIF(%q): got %q with error %v", in, n, err)
			}
			if code := webhooks.ErrorCode(err); code != webhooks.EINVALIDNIF {
				t.Errorf("NormalizeNIF(%q): got code %s, want %s", in, code, webhooks.EINVALIDNIF)
			}
			return
		}
		if len(n) != 9 {
			t.Fatalf("NormalizeNIF(%q) = %q: got %d characters, want 9", in, n, len(n))
		}
		for i := 0; i < len(n); i++ {
			if strings.IndexByte(controls, n[i]) < 0 {
				t.Fatalf("NormalizeNIF(%q) = %q: character %q is not a digit or an upper-case letter", in, n, n[i])
			}
		}
		again, err := webhooks.NormalizeNIF(n)
		if err != nil || again != n {
			t.Fatalf("NormalizeNIF(%q) = %q, but normalizing it again gives %q, %v", in, n, again, err)
		}
		// Every other control character is refused, but the twin of a CIF
		// that takes either form.
		valid := 0
		for i := 0; i < len(controls); i++ {
			c := controls[i]
			if c == n[8] {
				continue
			}
			if _, err := webhooks.NormalizeNIF(n[:8] + string(c)); err == nil {
				valid++
			}
		}
		want := 0
		if strings.IndexByte("CDFGJUV", n[0]) >= 0 {
			want = 1
		}
		if valid != want {
			t.Errorf("NormalizeNIF(%q) = %q: %d other control characters are valid too, want %d", in, n, valid, want)
		}
	})
}
