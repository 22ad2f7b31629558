package webhooks

import "bytes"

// topLevel returns the raw values of the named members of obj, a JSON
// object compacted by json.Compact (valid, no white space), in one pass
// without decoding it: registration checks a few members of every object,
// and a decoder that parses the whole object again cost as much as the
// request's decoding. ok is false when a member's name has escapes, which
// only a decoder reads right.
func topLevel(obj []byte, names ...string) (values [][]byte, ok bool) {
	values = make([][]byte, len(names))
	i := 1 // past '{'
	for i < len(obj) && obj[i] != '}' {
		if obj[i] == ',' {
			i++
		}
		end := stringEnd(obj, i)
		key := obj[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		i = end + 1 // past ':'
		vend := valueEnd(obj, i)
		for n, name := range names {
			if string(key) == name {
				values[n] = obj[i:vend]
			}
		}
		i = vend
	}
	return values, true
}

// stringEnd returns the index just past the JSON string starting at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the JSON value starting at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default: // a number, true, false or null
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
			j++
		}
		return j
	}
}
