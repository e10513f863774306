package docs

import (
	"fmt"
	"regexp"
	"strings"
)

// Wildcard in a console block's expected output stands for what differs
// from run to run (a UID, an age, a timestamp): within a line it matches
// any text, and a line that is only the wildcard matches any number of
// lines, none included.
const Wildcard = "…"

// Step is one command of a console block and the output it should print.
type Step struct {
	Command string
	Want    []string
}

// ConsoleSteps splits a console block (a shell session: "$ " starts a
// command, a command line ending in a backslash continues on the next
// line, every other line is output) into its steps.
func ConsoleSteps(block string) ([]Step, error) {
	var steps []Step
	continued := false
	for i, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		switch {
		case continued:
			steps[len(steps)-1].Command += "\n" + line
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, Step{Command: strings.TrimPrefix(line, "$ ")})
		case len(steps) == 0:
			return nil, fmt.Errorf("line %d: output before the first command (commands start with \"$ \"): %q", i+1, line)
		default:
			steps[len(steps)-1].Want = append(steps[len(steps)-1].Want, line)
		}
		continued = (continued || strings.HasPrefix(line, "$ ")) && strings.HasSuffix(line, "\\")
	}
	return steps, nil
}

var space = regexp.MustCompile(`[ \t]+`)

// Match reports whether got, a command's output, is what want describes.
// Runs of spaces match any run of spaces (kubectl aligns its columns to
// the longest value), trailing spaces and blank lines at the end do not
// count, and Wildcard matches what varies.
func Match(want []string, got string) bool {
	var re strings.Builder
	re.WriteString(`\A`)
	for len(want) > 0 && strings.TrimSpace(want[len(want)-1]) == "" {
		want = want[:len(want)-1]
	}
	for _, line := range want {
		line = strings.TrimRight(line, " \t")
		if line == Wildcard {
			re.WriteString(`(?:[^\n]*\n)*?`)
			continue
		}
		for j, part := range strings.Split(line, Wildcard) {
			if j > 0 {
				re.WriteString(`[^\n]*?`)
			}
			for k, word := range space.Split(part, -1) {
				if k > 0 {
					re.WriteString(`[ \t]+`)
				}
				re.WriteString(regexp.QuoteMeta(word))
			}
		}
		re.WriteString(`\n`)
	}
	re.WriteString(`\z`)
	return regexp.MustCompile(re.String()).MatchString(normalize(got))
}

// normalize drops trailing spaces from every line and blank lines at the
// end, and ends every line, the last one included, with a newline.
func normalize(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	s = strings.TrimRight(strings.Join(lines, "\n"), "\n")
	if s == "" {
		return ""
	}
	return s + "\n"
}
