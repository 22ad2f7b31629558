package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// flagLine is a flag's first line in -h: the flag, and the one word that
// names its value, if it takes one (a one-letter boolean flag has its
// usage on the same line).
var flagLine = regexp.MustCompile(`^  -[a-z][a-z0-9-]*( [a-zA-Z]+)?(\t.*)?$`)

// TestHelp_FlagValueNames: in every command's -h, a flag's value is named
// by one word. The flag package takes a usage's first `backquoted` text as
// the value's name, so a usage that quoted a command with backquotes made
// bench -h print "-processes webhooks serve".
func TestHelp_FlagValueNames(t *testing.T) {
	for _, command := range []string{"serve", "bench", "probe", "listen"} {
		var out bytes.Buffer
		run(context.Background(), []string{command, "-h"}, &out, &out)
		lines := 0
		for _, l := range strings.Split(out.String(), "\n") {
			if !strings.HasPrefix(l, "  -") {
				continue
			}
			lines++
			if !flagLine.MatchString(l) {
				t.Errorf("%s -h: flag line %q names its value with more than one word", command, l)
			}
		}
		if lines == 0 {
			t.Errorf("%s -h printed no flags:\n%s", command, out.String())
		}
	}
}
