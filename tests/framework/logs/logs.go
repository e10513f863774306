// Package logs reads the ends of log files for error messages and failure
// dumps.
package logs

import (
	"os"
	"strings"
)

// Tail returns the last n lines of a file, or why it could not be read.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
