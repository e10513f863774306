package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	"example.com/redis-operator/internal/proc"
)

// An operator that dies, or panics and goes on, must not go unseen. A
// spec that only checks the cluster would pass against an operator whose
// reconciler panics once its Redis is gone (controller-runtime recovers
// the panic, logs it and requeues), or that exits while a namespace is
// cleaned up, to be started again by the next spec. So after each spec
// that made a namespace, and at the end of the suite, the framework reads
// the logs of the operator under test, wherever it runs (its process on
// the host, each host replica, each pod), for the marks a dying or
// panicking Go process leaves, and fails the spec when a process exited,
// or a pod's container restarted, without a spec asking for it.

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

// deathMark is where the operator under test stood when a spec (or the
// suite) began: the log offset of each of its processes on the host, and
// the time, for the logs of its pods. The zero mark is the beginning.
type deathMark struct {
	offsets map[*Operator]int64
	at      time.Time
}

// markDeaths marks where the operator under test stands now.
func (e *Env) markDeaths() deathMark {
	m := deathMark{offsets: map[*Operator]int64{}, at: time.Now()}
	for _, o := range e.hostProcesses() {
		m.offsets[o] = o.LogOffset()
	}
	return m
}

// hostProcesses are the operator under test's processes on the host: the
// suite's one operator, or the deployed operator's host replicas (the
// local backend's), wherever this process can see them.
func (e *Env) hostProcesses() []*Operator {
	if e.Operator != nil {
		return []*Operator{e.Operator}
	}
	if e.deployed != nil {
		return e.deployed.hostProcesses()
	}
	return nil
}

// exitsUnasked says, for each process of the operator under test that
// ended while no one had asked it to (Stop, Kill), and no supervisor was
// there to restart it, how; empty if none did.
func (e *Env) exitsUnasked(when string) []string {
	var died []string
	for _, o := range e.hostProcesses() {
		if d := o.exitedUnasked(when); d != "" {
			died = append(died, d)
		}
	}
	return died
}

// deathsSince says how the operator under test shows, since mark m, that
// it panicked, raced or died: in the log of each of its host processes,
// and for its pods, in their logs and in restarts that no spec asked for.
func (e *Env) deathsSince(ctx context.Context, m deathMark, when string) []string {
	var deaths []string
	for _, o := range e.hostProcesses() {
		if d := o.deathSince(m.offsets[o], when); d != "" {
			deaths = append(deaths, d)
		}
	}
	if e.deployed != nil {
		deaths = append(deaths, e.deployed.podDeaths(ctx, m.at, when)...)
	}
	return deaths
}

// deathSince says how one operator process' log since offset shows it
// panicked or died (when says what that part of the log covers), or "":
// each replica of several has a log, and a death check, of its own.
func (o *Operator) deathSince(offset int64, when string) string {
	if o.Chapter == 0 {
		return ""
	}
	lines := deathIn(o.LogSince(offset), 3)
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("the chapter %d operator%s panicked, or died, %s (its log: %s):\n%s",
		o.Chapter, o.named(), when, o.LogPath, strings.Join(lines, "\n"))
}

// LoggedDeath says how the operator's whole log shows it panicked (its
// panic recovered or not), met a fatal error or raced (when says what the
// log covers), or "": for an operator that a spec starts and judges
// itself, as each run of the crash sweep does.
func (o *Operator) LoggedDeath(when string) string { return o.deathSince(0, when) }

// exitedUnasked says how one operator process ended while no one had
// asked it to (Stop, Kill), and no supervisor restarts it, or "".
func (o *Operator) exitedUnasked(when string) string {
	if o.Chapter == 0 || o.remote {
		return ""
	}
	died, err := o.diedUnasked()
	if !died {
		return ""
	}
	return fmt.Sprintf("the chapter %d operator%s exited by itself %s (%v); its log %s ends with:\n%s",
		o.Chapter, o.named(), when, err, o.LogPath, proc.Tail(o.LogPath, 20))
}

// named is " (NAME)" for a replica of several, "" for the one operator.
func (o *Operator) named() string {
	if o.Name == "" {
		return ""
	}
	return " (" + o.Name + ")"
}
