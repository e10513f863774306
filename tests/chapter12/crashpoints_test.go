package chapter12

import (
	"strings"

	"example.com/redis-operator/operator/faults"
)

// A crashPoint is where a run of the sweep crashes the operator: right
// after a write, or right before one, named as the operator names its
// writes ("delete Pod cache-4#1": the first delete of pod cache-4).
type crashPoint struct {
	Before bool
	Write  string
}

// first reports whether the point's write is the first of its name. A
// later one is numbered as events fell in the clean run: a run may make
// fewer (12 status patches where the clean run made 15; one delete of a
// pod where the clean run's cache, behind, had it deleted twice) and never
// reach it, though it does all the scenario asks.
func (p crashPoint) first() bool { return strings.HasSuffix(p.Write, "#1") }

func (p crashPoint) String() string {
	if p.Before {
		return "before " + p.Write
	}
	return "after " + p.Write
}

// vars is the operator's environment that asks for the crash.
func (p crashPoint) vars() []string {
	if p.Before {
		return []string{faults.EnvCrashBeforeWrite + "=" + p.Write}
	}
	return []string{faults.EnvCrashAfterWrite + "=" + p.Write}
}

// nameOf is a write's name without its number among those of that name:
// "delete Pod cache-4".
func nameOf(write string) string {
	name, _, _ := strings.Cut(write, "#")
	return name
}

// crashPoints are the sweep's points for the writes of the clean run:
// right after each, and right before each that follows a write of another
// name, one the clean run makes several times. Which status patch is the
// 12th depends on how events fell together in that run; the first delete
// of cache-4 does not, and right before it is right after whichever patch
// came last.
func crashPoints(writes []faults.Write) []crashPoint {
	made := map[string]int{}
	for _, w := range writes {
		made[nameOf(w.Name)]++
	}
	var points []crashPoint
	for i, w := range writes {
		if prev := i - 1; prev >= 0 && made[nameOf(writes[prev].Name)] > 1 && nameOf(writes[prev].Name) != nameOf(w.Name) {
			points = append(points, crashPoint{Before: true, Write: w.Name})
		}
		points = append(points, crashPoint{Write: w.Name})
	}
	return points
}
