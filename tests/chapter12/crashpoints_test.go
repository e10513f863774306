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
	// Repeat is true for a write that does again what the last write of
	// the same object did, and that one succeeded: a second delete of a
	// pod with no create between, made from a cache that had not yet seen
	// the first delete. Whether a run makes it depends on how fast its
	// watch was, not on the scenario; the state it leaves is the one the
	// first write left, whose own point the sweep crashes at.
	Repeat bool
}

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
// came last. A create or a delete that repeats the last write of its
// object, which succeeded, is a Repeat.
func crashPoints(writes []faults.Write) []crashPoint {
	made := map[string]int{}
	for _, w := range writes {
		made[nameOf(w.Name)]++
	}
	last := map[string]faults.Write{} // the last write of each object, by kind and object
	var points []crashPoint
	for i, w := range writes {
		object := w.Kind + " " + w.Object
		prev, seen := last[object]
		repeat := seen && (w.Verb == "create" || w.Verb == "delete") && prev.Verb == w.Verb && prev.Error == ""
		last[object] = w
		if prev := i - 1; prev >= 0 && made[nameOf(writes[prev].Name)] > 1 && nameOf(writes[prev].Name) != nameOf(w.Name) {
			points = append(points, crashPoint{Before: true, Write: w.Name, Repeat: repeat})
		}
		points = append(points, crashPoint{Write: w.Name, Repeat: repeat})
	}
	return points
}
