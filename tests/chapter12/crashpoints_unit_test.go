package chapter12

import (
	"fmt"
	"slices"
	"testing"

	"example.com/redis-operator/operator/faults"
)

func TestCrashPoints(t *testing.T) {
	w := func(verb, object string, n int) faults.Write {
		kind := "Pod"
		if verb == "patch status" {
			kind = "Redis"
		}
		return faults.Write{Verb: verb, Kind: kind, Object: "ns/" + object, Name: fmt.Sprintf("%s %s %s#%d", verb, kind, object, n)}
	}
	writes := []faults.Write{
		w("create", "cache-0", 1),
		w("patch status", "cache", 1),
		w("patch status", "cache", 2),
		w("delete", "cache-2", 1),
		w("delete", "cache-2", 2),
		w("create", "cache-2", 1),
	}
	want := []crashPoint{
		{Write: "create Pod cache-0#1"},
		{Write: "patch status Redis cache#1"},
		{Write: "patch status Redis cache#2"},
		// After a row of status patches, whose number varies from run to
		// run: right before the write that follows, too.
		{Before: true, Write: "delete Pod cache-2#1"},
		{Write: "delete Pod cache-2#1"},
		{Write: "delete Pod cache-2#2"},
		{Before: true, Write: "create Pod cache-2#1"},
		{Write: "create Pod cache-2#1"},
	}
	if got := crashPoints(writes); !slices.Equal(got, want) {
		t.Errorf("crashPoints:\n got %#v\nwant %#v", got, want)
	}
	for p, first := range map[crashPoint]bool{
		{Write: "patch status Redis cache#1"}:   true,
		{Write: "patch status Redis cache#11"}:  false,
		{Before: true, Write: "delete Pod c#1"}: true,
		{Write: "delete Pod cache-2#2"}:         false,
	} {
		if p.first() != first {
			t.Errorf("%v.first() = %t, want %t", p, !first, first)
		}
	}
}
