package webhooks_test

import (
	"strings"
	"testing"

	webhooks "github.com/factuarea/webhooks"
)

func TestNormalizeNIF_Valid(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// DNI-based NIF: 8 digits and the letter of the number modulo 23.
		{"dni", "12345678Z", "12345678Z"},
		{"dni zeros", "00000000T", "00000000T"},
		{"dni nines", "99999999R", "99999999R"},
		// NIE: X, Y or Z stand for 0, 1 and 2 in front of 7 digits.
		{"nie X", "X1234567L", "X1234567L"},
		{"nie Y", "Y1234567X", "Y1234567X"},
		{"nie Z", "Z1234567R", "Z1234567R"},
		// K, L and M NIFs: the letter of the 7 digits.
		{"nif K", "K1234567L", "K1234567L"},
		{"nif L", "L1234567L", "L1234567L"},
		{"nif M", "M1234567L", "M1234567L"},
		// CIF whose control must be a digit (A, B, E, H).
		{"cif B digit", "B12345674", "B12345674"},
		{"cif A digit", "A58818501", "A58818501"},
		{"cif E digit", "E12345674", "E12345674"},
		{"cif H digit", "H12345674", "H12345674"},
		{"cif zeros", "B00000000", "B00000000"},
		// CIF whose control must be a letter (P, Q, R, S, N, W).
		{"cif P letter", "P1234567D", "P1234567D"},
		{"cif Q letter", "Q2826000H", "Q2826000H"},
		{"cif R letter", "R1234567D", "R1234567D"},
		{"cif S letter", "S1234567D", "S1234567D"},
		{"cif N letter", "N1234567D", "N1234567D"},
		{"cif W letter", "W1234567D", "W1234567D"},
		// CIF that takes either form (C, D, F, G, J, U, V).
		{"cif C digit", "C12345674", "C12345674"},
		{"cif C letter", "C1234567D", "C1234567D"},
		{"cif G letter", "G1234567D", "G1234567D"},
		{"cif J digit", "J12345674", "J12345674"},
		{"cif U digit", "U12345674", "U12345674"},
		{"cif V letter", "V1234567D", "V1234567D"},
		// Normalization: case, spaces, dots and dashes.
		{"lowercase dni", "12345678z", "12345678Z"},
		{"lowercase nie", "x1234567l", "X1234567L"},
		{"lowercase cif", "p1234567d", "P1234567D"},
		{"spaced", " 12 345 678 Z ", "12345678Z"},
		{"dashed nie", "X-1234567-L", "X1234567L"},
		{"dotted dni", "12.345.678-Z", "12345678Z"},
		{"tab around", "\tB12345674\n", "B12345674"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhooks.NormalizeNIF(tt.in)
			if err != nil || got != tt.want {
				t.Errorf("NormalizeNIF(%q): got %q, %v; want %q, nil", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestNormalizeNIF_Invalid(t *testing.T) {
	tests := []struct {
		name, in string
	}{
		{"empty", ""},
		{"spaces only", "   "},
		{"dni wrong letter", "12345678A"},
		{"dni digit control", "123456789"},
		{"dni short", "1234567Z"},
		{"dni long", "123456789Z"},
		{"dni letter inside", "1234A678Z"},
		{"nie wrong letter", "X1234567A"},
		{"nie Y wrong letter", "Y1234567L"},
		{"nie short", "X123456L"},
		{"nif K wrong letter", "K1234567A"},
		{"cif B wrong digit", "B12345675"},
		{"cif B letter where a digit is due", "B1234567D"},
		{"cif A letter where a digit is due", "A1234567D"},
		{"cif P digit where a letter is due", "P12345674"},
		{"cif S digit where a letter is due", "S12345674"},
		{"cif P wrong letter", "P1234567E"},
		{"cif C wrong digit", "C12345675"},
		{"cif C wrong letter", "C1234567E"},
		{"unknown first letter I", "I1234567D"},
		{"unknown first letter O", "O12345674"},
		{"unknown first letter T", "T1234567D"},
		{"symbol", "B1234567#"},
		{"non-ASCII", "B1234567Ñ"},
		{"underscore", "12_345678Z"},
		{"nine letters", "ABCDEFGHI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhooks.NormalizeNIF(tt.in)
			if err == nil {
				t.Fatalf("NormalizeNIF(%q): got %q, nil; want an error", tt.in, got)
			}
			if code := webhooks.ErrorCode(err); code != webhooks.EINVALIDNIF {
				t.Errorf("NormalizeNIF(%q): got code %s, want %s", tt.in, code, webhooks.EINVALIDNIF)
			}
			if got != "" {
				t.Errorf("NormalizeNIF(%q): got %q with the error, want \"\"", tt.in, got)
			}
		})
	}
}

// TestNormalizeNIF_Company checks that a company's NIF is normalized when it
// is validated, and refused with invalid_nif otherwise.
func TestNormalizeNIF_Company(t *testing.T) {
	c := &webhooks.Company{AccountID: webhooks.NewID(), NIF: "b-1234567-4", Name: " Acme SL "}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate: got %v, want nil", err)
	}
	if c.NIF != "B12345674" || c.Name != "Acme SL" {
		t.Errorf("got NIF %q name %q, want B12345674 and Acme SL", c.NIF, c.Name)
	}
	c = &webhooks.Company{AccountID: webhooks.NewID(), NIF: "B12345675", Name: "Acme SL"}
	if code := webhooks.ErrorCode(c.Validate()); code != webhooks.EINVALIDNIF {
		t.Errorf("wrong control digit: got code %q, want %s", code, webhooks.EINVALIDNIF)
	}
}

// TestNormalizeNIF_MessageNamesField: every refusal names the field the
// caller sent, nif, whatever kind of number it is (the CIF and NIE
// messages said "cif" and "nie"), and says the control character is wrong.
func TestNormalizeNIF_MessageNamesField(t *testing.T) {
	for nif, kind := range map[string]string{
		"12345678A": "", "X1234567A": "NIE", "K1234567A": "", "B12345675": "CIF", "12": "", "I12345674": "",
	} {
		_, err := webhooks.NormalizeNIF(nif)
		msg := webhooks.ErrorMessage(err)
		if webhooks.ErrorCode(err) != webhooks.EINVALIDNIF || !strings.HasPrefix(msg, "nif \""+nif+"\" ") {
			t.Errorf("NormalizeNIF(%q): got %s %q, want invalid_nif naming the field nif", nif, webhooks.ErrorCode(err), msg)
		}
		if kind != "" && !strings.Contains(msg, "is a "+kind+" with a wrong control") {
			t.Errorf("NormalizeNIF(%q): got %q, want it to say it is a %s with a wrong control character", nif, msg, kind)
		}
	}
}
