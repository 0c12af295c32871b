package engine

import "strings"

// suggest returns the candidate closest to name, when one is close enough
// to be a slip of the keyboard (a letter or two, or case); "" otherwise.
func suggest(name string, candidates []string) string {
	// Quoted values ("Required") are compared without their quotes.
	name = strings.Trim(name, `"`)
	best, bestDist := "", 0
	limit := len(name) / 4
	for _, quoted := range candidates {
		c := strings.Trim(quoted, `"`)
		if c == name {
			continue
		}
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if d > limit && !strings.EqualFold(c, name) && !prefixed(name, c) {
			continue
		}
		c = quoted
		if best == "" || d < bestDist || d == bestDist && c < best {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of two strings, by byte.
func editDistance(a, b string) int {
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
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// prefixed reports whether one of the names starts with the other, the
// shorter of some length (image and imageName).
func prefixed(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 4 && strings.HasPrefix(strings.ToLower(b), strings.ToLower(a))
}
