// Package textwrap breaks prose into lines, for the generator's comments
// and for the key table that -h prints.
package textwrap

import "strings"

// Lines breaks s at white space into lines of at most width bytes; a word
// longer than width stands alone on its line. It returns one empty line for
// an s with no words.
func Lines(s string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		if cur != "" && len(cur)+1+len(w) > width {
			lines = append(lines, cur)
			cur = w
			continue
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	return append(lines, cur)
}
