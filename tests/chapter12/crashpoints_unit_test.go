package chapter12

import (
	"fmt"
	"slices"
	"testing"

	"example.com/redis-operator/operator/faults"
)

func TestCrashPoints(t *testing.T) {
	w := func(verb, object string, n int, err string) faults.Write {
		kind := "Pod"
		if verb == "patch status" {
			kind = "Redis"
		}
		return faults.Write{Verb: verb, Kind: kind, Object: "ns/" + object, Error: err, Name: fmt.Sprintf("%s %s %s#%d", verb, kind, object, n)}
	}
	writes := []faults.Write{
		w("create", "cache-0", 1, ""),
		w("patch status", "cache", 1, ""),
		w("patch status", "cache", 2, ""),
		w("delete", "cache-2", 1, ""),
		w("delete", "cache-2", 2, ""), // from a cache that had not seen the first: a repeat
		w("delete", "cache-1", 1, "the server could not find the requested resource"),
		w("delete", "cache-1", 2, ""), // the first failed: not a repeat
		w("create", "cache-2", 1, ""),
		w("create", "cache-2", 2, `pods "cache-2" already exists`), // a repeat
		w("delete", "cache-2", 3, ""),                              // a create came between: not a repeat
	}
	want := []crashPoint{
		{Write: "create Pod cache-0#1"},
		{Write: "patch status Redis cache#1"},
		{Write: "patch status Redis cache#2"},
		{Before: true, Write: "delete Pod cache-2#1"},
		{Write: "delete Pod cache-2#1"},
		{Write: "delete Pod cache-2#2", Repeat: true},
		{Before: true, Write: "delete Pod cache-1#1"},
		{Write: "delete Pod cache-1#1"},
		{Write: "delete Pod cache-1#2"},
		{Before: true, Write: "create Pod cache-2#1"},
		{Write: "create Pod cache-2#1"},
		{Write: "create Pod cache-2#2", Repeat: true},
		{Before: true, Write: "delete Pod cache-2#3"},
		{Write: "delete Pod cache-2#3"},
	}
	if got := crashPoints(writes); !slices.Equal(got, want) {
		t.Errorf("crashPoints:\n got %#v\nwant %#v", got, want)
	}
}
