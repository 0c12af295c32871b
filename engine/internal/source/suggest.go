package source

import "strings"

// Suggest returns the candidate closest to name, when one is close enough
// to be a slip of the keyboard (a letter or two, or case); "" otherwise.
func Suggest(name string, candidates []string) string {
	// Quoted values ("Required") are compared without their quotes.
	name = strings.Trim(name, `"`)
	best, bestDist := "", 0
	limit := len(name) / 4
	for _, quoted := range candidates {
		c := strings.Trim(quoted, `"`)
		if c == name {
			continue
		}
		d := EditDistance(strings.ToLower(name), strings.ToLower(c))
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

// EditDistance is the optimal string alignment distance of two strings,
// by byte: Levenshtein's, with two neighbouring letters swapped counting
// as one edit (paddel, paddle).
func EditDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// prefixed reports whether one of the names starts with the other, the
// shorter of some length (image and imageName).
func prefixed(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return len(a) >= 4 && strings.HasPrefix(strings.ToLower(b), strings.ToLower(a))
}
