package webhooks

import (
	"strings"
)

// dniLetters maps a DNI or NIE number modulo 23 to its control letter.
const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

// cifLetters maps a CIF control digit to its letter form.
const cifLetters = "JABCDEFGHI"

// NormalizeNIF returns nif in canonical form (upper case, without spaces,
// dots or dashes) if it is a valid Spanish tax id: a DNI-based NIF
// (8 digits and a letter), a NIE (X, Y or Z, 7 digits and a letter), a
// K, L or M NIF (a letter, 7 digits and a letter), or a CIF (an entity
// letter, 7 digits and a control digit or letter). The control character is
// checked in every case. It returns an EINVALIDNIF error otherwise.
func NormalizeNIF(nif string) (string, error) {
	n := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '.':
			return -1
		}
		return r
	}, strings.ToUpper(strings.TrimSpace(nif)))
	if len(n) != 9 || !allDigits(n[1:8]) {
		return "", Errorf(EINVALIDNIF, "nif %q is not a NIF, NIE or CIF: it must be 9 characters, such as 12345678Z, X1234567L or B12345674.", nif)
	}
	first, control := n[0], n[8]
	switch {
	case first >= '0' && first <= '9':
		if !allDigits(n[:8]) {
			break
		}
		if control == dniLetters[atoi(n[:8])%23] {
			return n, nil
		}
		return "", Errorf(EINVALIDNIF, "nif %q has a wrong control letter: the last letter of a DNI-based NIF follows from its 8 digits, so a digit or the letter was mistyped.", nif)
	case first == 'X' || first == 'Y' || first == 'Z':
		num := string(rune('0'+strings.IndexByte("XYZ", first))) + n[1:8]
		if control == dniLetters[atoi(num)%23] {
			return n, nil
		}
		return "", Errorf(EINVALIDNIF, "nif %q is a NIE with a wrong control letter: the last letter follows from the first letter and the 7 digits, so one of them was mistyped.", nif)
	case first == 'K' || first == 'L' || first == 'M':
		if control == dniLetters[atoi(n[1:8])%23] {
			return n, nil
		}
		return "", Errorf(EINVALIDNIF, "nif %q has a wrong control letter: the last letter of a K, L or M NIF follows from its 7 digits, so a digit or the letter was mistyped.", nif)
	case strings.IndexByte("ABCDEFGHJNPQRSUVW", first) >= 0:
		digit := cifControl(n[1:8])
		letter := cifLetters[digit]
		var ok bool
		switch {
		case strings.IndexByte("PQRSNW", first) >= 0: // letter only
			ok = control == letter
		case strings.IndexByte("ABEH", first) >= 0: // digit only
			ok = control == byte('0'+digit)
		default:
			ok = control == letter || control == byte('0'+digit)
		}
		if ok {
			return n, nil
		}
		return "", Errorf(EINVALIDNIF, "nif %q is a CIF with a wrong control character: the last character follows from the 7 digits, so a digit or the last character was mistyped.", nif)
	}
	return "", Errorf(EINVALIDNIF, "nif %q is not a NIF, NIE or CIF.", nif)
}

// cifControl computes a CIF's control digit from its 7 digits: the digits in
// even positions are added, those in odd positions are doubled and their
// digits added, and the control is what takes the sum to a multiple of ten.
func cifControl(digits string) int {
	sum := 0
	for i := 0; i < 7; i++ {
		d := int(digits[i] - '0')
		if i%2 == 0 {
			d *= 2
			d = d/10 + d%10
		}
		sum += d
	}
	return (10 - sum%10) % 10
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}
