// Package doctest lets tests read the repository's Markdown as a reader
// does: its fenced code blocks (to build, run or parse them), its headings
// (the anchors a link may name) and its links; and run shell blocks one
// after another in one shell session, as a reader types them. The tests
// that use it are in the root package (README.md and docs/) and kits/e2e
// (each kit's README).
package doctest

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
	"unicode"
)

// Block is one fenced code block.
type Block struct {
	// Lang is the first word of the fence's info string ("sh", "go"), or "".
	Lang string
	// Code is the block's text, each line ending in a newline.
	Code string
	// Line is the line of the opening fence, from 1.
	Line int
	// Section is the text of the nearest heading above the block.
	Section string
}

// fence matches an opening or closing code fence and its info string.
var fence = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([^`\\s]*)")

// heading matches an ATX heading.
var heading = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)

// scan calls text for each line outside code blocks, and block for each
// block.
func scan(md []byte, text func(line int, s string, section string), block func(Block)) {
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(nil, 1<<20)
	var (
		in      bool
		marker  string
		cur     Block
		code    strings.Builder
		section string
		n       int
	)
	for sc.Scan() {
		n++
		line := sc.Text()
		if !in {
			if m := fence.FindStringSubmatch(line); m != nil {
				in, marker = true, m[1]
				cur = Block{Lang: m[2], Line: n, Section: section}
				code.Reset()
				continue
			}
		} else if t := strings.TrimSpace(line); len(t) >= len(marker) && strings.Trim(t, marker[:1]) == "" {
			in = false
			cur.Code = code.String()
			if block != nil {
				block(cur)
			}
			continue
		}
		if in {
			// An indented block (in a list) keeps its code as written,
			// less the indentation of its fence.
			code.WriteString(line)
			code.WriteByte('\n')
			continue
		}
		if m := heading.FindStringSubmatch(line); m != nil {
			section = m[2]
		}
		if text != nil {
			text(n, line, section)
		}
	}
}

// Blocks returns the fenced code blocks of md, in order.
func Blocks(md []byte) []Block {
	var out []Block
	scan(md, nil, func(b Block) { out = append(out, b) })
	for i := range out {
		out[i].Code = dedent(out[i].Code)
	}
	return out
}

// dedent removes the indentation every non-blank line shares, which a block
// inside a list item has.
func dedent(code string) string {
	lines := strings.SplitAfter(code, "\n")
	prefix := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if prefix < 0 || n < prefix {
			prefix = n
		}
	}
	if prefix <= 0 {
		return code
	}
	for i, l := range lines {
		if len(l) >= prefix && strings.TrimSpace(l[:prefix]) == "" {
			lines[i] = l[prefix:]
		}
	}
	return strings.Join(lines, "")
}

// Headings returns the text of every heading outside code blocks, in order.
func Headings(md []byte) []string {
	var out []string
	scan(md, func(_ int, s, _ string) {
		if m := heading.FindStringSubmatch(s); m != nil {
			out = append(out, m[2])
		}
	}, nil)
	return out
}

// explicitAnchor matches an HTML element that names an anchor.
var explicitAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// Anchors returns the fragments a link into md may name: one per heading,
// as GitHub makes them (a repeated heading's gets -1, -2, …), and the ids
// of <a id="…"> and <a name="…"> elements.
func Anchors(md []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	scan(md, func(_ int, s, _ string) {
		if m := heading.FindStringSubmatch(s); m != nil {
			slug := Slug(m[2])
			if n := seen[slug]; n > 0 {
				out[slug+"-"+itoa(n)] = true
			} else {
				out[slug] = true
			}
			seen[slug]++
		}
		for _, m := range explicitAnchor.FindAllStringSubmatch(s, -1) {
			out[m[1]] = true
		}
	}, nil)
	return out
}

func itoa(n int) string {
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// markup is what GitHub drops from a heading before it makes the anchor:
// links keep their text, and emphasis and code marks go.
var (
	linkMarkup = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag    = regexp.MustCompile(`<[^>]+>`)
)

// Slug is the anchor GitHub gives a heading: lower case, letters, digits,
// spaces as hyphens, hyphens and underscores kept, everything else dropped.
func Slug(h string) string {
	h = linkMarkup.ReplaceAllString(h, "$1")
	h = htmlTag.ReplaceAllString(h, "")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Link is a link or an image of a Markdown file.
type Link struct {
	Target string
	Line   int
}

var (
	inlineCode = regexp.MustCompile("`+[^`]*`+")
	mdLink     = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refLink    = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	htmlLink   = regexp.MustCompile(`<(?:a|img)\s[^>]*\b(?:href|src)="([^"]+)"`)
)

// Links returns every link and image target outside code blocks and code
// spans: inline, reference definitions and HTML href and src.
func Links(md []byte) []Link {
	var out []Link
	scan(md, func(n int, s, _ string) {
		s = inlineCode.ReplaceAllString(s, "")
		for _, re := range []*regexp.Regexp{mdLink, refLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(s, -1) {
				out = append(out, Link{Target: m[1], Line: n})
			}
		}
	}, nil)
	return out
}

// Section returns the text of md from the heading whose text is title up
// to the next heading of the same level or higher, or nil when there is no
// such heading.
func Section(md []byte, title string) []byte {
	lines := bytes.SplitAfter(md, []byte("\n"))
	start, level := -1, 0
	in := false
	for i, l := range lines {
		s := strings.TrimRight(string(l), "\n")
		if fence.MatchString(s) {
			in = !in
			continue
		}
		if in {
			continue
		}
		m := heading.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		if start < 0 {
			if m[2] == title {
				start, level = i, len(m[1])
			}
			continue
		}
		if len(m[1]) <= level {
			return bytes.Join(lines[start:i], nil)
		}
	}
	if start < 0 {
		return nil
	}
	return bytes.Join(lines[start:], nil)
}
