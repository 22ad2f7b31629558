package catalog

import "fmt"

// suggest ends the message about s, which the catalog does not have: the
// nearest of candidates (followed by suffix) by edit distance, as a
// question when it is close enough to be a typing mistake, and as a
// pointer to the list otherwise. noun names what the candidates are.
func suggest(s string, candidates []string, suffix, noun string) string {
	best, dist := "", -1
	for _, c := range candidates {
		if d := distance(s, c); dist < 0 || d < dist {
			best, dist = c, d
		}
	}
	switch {
	case dist < 0:
		return "."
	case nearEnough(s, dist):
		return fmt.Sprintf(": did you mean %q?", best+suffix)
	}
	return fmt.Sprintf(": the nearest declared %s is %q (GET /v1/event_types lists the catalog).", noun, best+suffix)
}

// nearEnough reports whether dist edits of s look like a typing mistake rather
// than another name: at most 3, and at most a third of its length.
func nearEnough(s string, dist int) bool { return dist <= 3 && dist*3 <= len(s) }

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// bytes each count one, so that "snet" is one edit from "sent". Event
// types are ASCII.
func distance(a, b string) int {
	// Three rows: the one before the previous (for transpositions), the
	// previous and the current.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
