package chapters

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTableIsTheDirectories: the table lists every directory under
// chapters/, and nothing else, numbered from 1 with no gap; a rewrite
// rewrites a chapter before the one before it; the shipped chapter is
// one of them and not a rewrite.
func TestTableIsTheDirectories(t *testing.T) {
	dirs, err := filepath.Glob("[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i, c := range All {
		names = append(names, c.Name())
		if c.Number != i+1 {
			t.Errorf("row %d is chapter %d; the table counts from 1 with no gap", i, c.Number)
		}
		if c.Rewrites != 0 && (c.Rewrites < 1 || c.Rewrites >= c.Number-1) {
			t.Errorf("chapter %d rewrites chapter %d, which is not a chapter before the one before it", c.Number, c.Rewrites)
		}
		if c.Webhook && !c.InCluster {
			t.Errorf("chapter %d serves the webhook, but does not run in the cluster", c.Number)
		}
		if c.Rewrites != 0 && (c.ProvedByMutants || c.InCluster || c.Faults) {
			t.Errorf("chapter %d rewrites chapter %d: its proof is its suite and its mutants, and its branch has that chapter's layout, so it cannot be proven by mutants of lesson specs, run in the cluster or have faults", c.Number, c.Rewrites)
		}
		// A webhook configuration is generated from its markers.
		_, err := os.Stat(filepath.Join(c.Name(), "manifests.yaml"))
		if c.Webhook != (err == nil) {
			t.Errorf("chapter %d: Webhook is %v, yet %s/manifests.yaml exists: %v", c.Number, c.Webhook, c.Name(), err == nil)
		}
		// A chapter branch has what comes with running in the cluster and
		// with the webhook from the first chapter that does on: every
		// later chapter but a rewrite does too.
		if c.Rewrites == 0 && c.Number > 1 {
			prev := All[c.Number-2]
			for prev.Rewrites != 0 {
				prev = All[prev.Number-2]
			}
			if prev.InCluster && !c.InCluster || prev.Webhook && !c.Webhook {
				t.Errorf("chapter %d does not run in the cluster or serve the webhook as chapter %d before it does; the branches' layout (scripts/chapter-branches) takes them for good once a chapter has them", c.Number, prev.Number)
			}
		}
	}
	if !slices.Equal(dirs, names) {
		t.Errorf("the directories under chapters/ are %q, the table's %q", dirs, names)
	}
	if c, err := Get(Shipped); err != nil || c.Rewrites != 0 {
		t.Errorf("the shipped chapter %d: %+v, %v; want a chapter that rewrites none", Shipped, c, err)
	}
}

func TestParse(t *testing.T) {
	last := Latest().Number
	for in, want := range map[string]int{"5": 5, "05": 5, strconv.Itoa(last): last, "1": 1} {
		if c, err := Parse(in); err != nil || c.Number != want {
			t.Errorf("Parse(%q) = %d, %v; want chapter %d", in, c.Number, err, want)
		}
	}
	for _, in := range []string{"", "0", strconv.Itoa(last + 1), "-1", "+5", " 5", "five", "5x"} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("a chapter is a number from 1 to %d", last)) {
			t.Errorf("Parse(%q): %v; want the one message for every tool", in, err)
		}
	}
	if c, _ := Get(15); c.Base() != 9 || c.Dir() != "chapters/15-under-the-hood" {
		t.Errorf("chapter 15: base %d, dir %s; want 9, chapters/15-under-the-hood", c.Base(), c.Dir())
	}
	if c, _ := Get(5); c.Base() != 4 {
		t.Errorf("chapter 5's base is %d, want 4", c.Base())
	}
}

// TestSuites: what each suite reads of its row. A rewrite and the
// shipped chapter run on the host and carry the behaviour of every
// chapter before them, each
// behaviour is taught by one chapter, and the lanes cover every chapter
// once, in order.
func TestSuites(t *testing.T) {
	taught := map[string]int{}
	for _, c := range All {
		for _, b := range c.Behaviours {
			if other, dup := taught[b]; dup {
				t.Errorf("behaviour %q is taught by chapters %d and %d", b, other, c.Number)
			}
			taught[b] = c.Number
		}
		if c.Operator == OperatorDeployed && !c.InCluster {
			t.Errorf("chapter %d's suite deploys its operator, but it does not run in the cluster", c.Number)
		}
		if c.Operator == OperatorPerSpec && !c.Faults {
			t.Errorf("chapter %d's specs run its operator's test build, which it does not have (Faults)", c.Number)
		}
		if c.Title == "" {
			t.Errorf("chapter %d has no title", c.Number)
		}
	}
	for _, c := range All {
		if c.Number != Shipped && c.Rewrites == 0 {
			continue
		}
		s, err := SuiteOf(c.Number)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, n := range taught {
			if n < c.Number {
				want++
			}
		}
		if len(s.Carries) != want || s.Operator != OperatorOnHost {
			t.Errorf("chapter %d's suite: %+v; want it on the host, carrying the %d behaviours of the chapters before it", c.Number, s, want)
		}
	}
	if s, _ := SuiteOf(5); s.Carries != nil || s.Description() != "Chapter 5: rebuild pods" || s.Label() != "chapter-05" {
		t.Errorf("chapter 5's suite: %+v, %q, %q", s, s.Description(), s.Label())
	}
	var covered []int
	for _, l := range Lanes() {
		var from, to int
		if _, err := fmt.Sscanf(l, "%d-%d", &from, &to); err != nil || from > to {
			t.Fatalf("lane %q is not FROM-TO", l)
		}
		for n := from; n <= to; n++ {
			covered = append(covered, n)
		}
	}
	if want := Where(func(Chapter) bool { return true }); !slices.Equal(covered, want) {
		t.Errorf("the lanes %q cover chapters %v, want %v", Lanes(), covered, want)
	}
	if got := SuiteDir(5); got != "tests/chapter05" {
		t.Errorf("SuiteDir(5) = %q", got)
	}
}

// TestSuiteFiles: each chapter's suite names its own chapter in one
// framework.NewSuite call, and imports Ginkgo, without which the Ginkgo
// CLI takes the package for a plain go test and runs it without its
// flags (focus, labels, parallel processes).
func TestSuiteFiles(t *testing.T) {
	for _, c := range All {
		dir := filepath.Join("..", SuiteDir(c.Number))
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil || len(files) == 0 {
			t.Errorf("chapter %d has no suite in %s", c.Number, dir)
			continue
		}
		var calls []string
		ginkgo := false
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ginkgo = ginkgo || strings.Contains(string(src), "\t. \"github.com/onsi/ginkgo/v2\"\n")
			for _, m := range suiteCall.FindAllStringSubmatch(string(src), -1) {
				calls = append(calls, m[1])
			}
		}
		if !slices.Equal(calls, []string{strconv.Itoa(c.Number)}) {
			t.Errorf("%s calls framework.NewSuite with %q; want it once, with %d", dir, calls, c.Number)
		}
		if !ginkgo {
			t.Errorf("%s does not import Ginkgo: the Ginkgo CLI would run it as a plain go test", dir)
		}
	}
}

var suiteCall = regexp.MustCompile(`framework\.NewSuite\(([^)]*)\)`)
