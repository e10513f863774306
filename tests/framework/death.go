package framework

import (
	"fmt"
	"strings"

	"example.com/redis-operator/internal/proc"
)

// An operator that dies, or panics and goes on, must not go unseen. A
// spec that only checks the cluster would pass against an operator whose
// reconciler panics once its Redis is gone (controller-runtime recovers
// the panic, logs it and requeues), or that exits while a namespace is
// cleaned up, to be started again by the next spec. So the framework
// reads the operator's log for the marks a dying or panicking Go process
// leaves, after each spec that made a namespace and at the end of the
// suite, and a spec's cleanup fails when the operator has exited without
// being asked to.

// deathMarks are what the log of a Go process holds when it panicked
// (whether controller-runtime recovered it or not), met a fatal error of
// the runtime, or raced (the race detector's report).
var deathMarks = []string{"panic:", "Observed a panic", "fatal error:", "WARNING: DATA RACE"}

// deathIn returns the lines of log that bear a death mark, at most max.
func deathIn(log string, max int) []string {
	var found []string
	for _, line := range strings.Split(log, "\n") {
		for _, mark := range deathMarks {
			if strings.Contains(line, mark) {
				found = append(found, strings.TrimSpace(line))
				break
			}
		}
		if len(found) == max {
			break
		}
	}
	return found
}

// deathSince says how the operator's log since offset shows it panicked
// or died (when says what that part of the log covers), or "".
func (e *Env) deathSince(offset int64, when string) string {
	if e.Operator == nil || e.Operator.Chapter == 0 {
		return ""
	}
	lines := deathIn(e.Operator.LogSince(offset), 3)
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("the chapter %d operator panicked, or died, %s (its log: %s):\n%s",
		e.Operator.Chapter, when, e.Operator.LogPath, strings.Join(lines, "\n"))
}

// diedUnasked says how the operator's process ended while no one had
// asked it to (Stop), and no supervisor was there to restart it, or "".
func (e *Env) diedUnasked(when string) string {
	if e.Operator == nil || e.Operator.Chapter == 0 || e.Operator.remote {
		return ""
	}
	died, err := e.Operator.diedUnasked()
	if !died {
		return ""
	}
	return fmt.Sprintf("the chapter %d operator exited by itself %s (%v); its log %s ends with:\n%s",
		e.Operator.Chapter, when, err, e.Operator.LogPath, proc.Tail(e.Operator.LogPath, 20))
}
