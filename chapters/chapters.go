// Package chapters is the table of the course's chapters: what each one
// is and what it needs. A fact about a chapter (which one ships, which run
// in the cluster, serve the webhook, have a test build with faults, are
// proven by their own mutants, rewrite an earlier one) is written here
// once. The operator, the tools and the Makefile read it; the Makefile
// through scripts/chapters.mk, which `make manifests` generates from it
// (scripts/chapters-gen), as it generates the operator's map from a
// chapter's number to its package (operator/controller).
//
// It imports no chapter, so that a tool that reads it does not build
// them all.
package chapters

import (
	"fmt"
	"strconv"
	"strings"
)

// Chapter is one row of the table.
type Chapter struct {
	// Number is the chapter's number, from 1; Slug the rest of its
	// directory's name (chapters/NN-slug).
	Number int
	Slug   string
	// Rewrites is the chapter whose behaviour this one keeps, written
	// anew (0: none). Its lesson is its diff against that chapter, it has
	// no lesson spec (none can fail against the chapter it rewrites), its
	// exercise starts from its own package with its lesson taken out, and
	// its branch has that chapter's layout and is that branch's child.
	Rewrites int
	// InCluster: its suite runs the operator in the cluster (make deploy:
	// the image, the Deployment, the manifests).
	InCluster bool
	// Webhook: it serves the validating webhook (with its certificates
	// and a CRD of its own).
	Webhook bool
	// Faults: its suite injects faults: it runs the operator on the host,
	// where it can crash it, and its test build (make build-faults; a
	// variant of it is built that way too).
	Faults bool
	// ProvedByMutants: its lesson specs are proven red against its own
	// mutants of them (chapters/NN-slug/mutants), not against the chapter
	// before, which fails them for want of what the chapter adds, not of
	// what they prove.
	ProvedByMutants bool
	// APIServerRung: the lowest rung of the testing ladder on which its
	// lesson specs can fail is an API server alone (envtest), not a whole
	// cluster (TESTING.md): make test-envtest proves its lesson there.
	APIServerRung bool
	// TooLow, if set, is a lesson spec of the chapter that fails on an
	// API server alone, for what that rung lacks: make test-envtest runs
	// it there against the chapter's own operator, and it must fail.
	TooLow *TooLow
	// FakeClientMisses, if set, is one of the chapter's mutants that the
	// rung below an API server cannot see: make test-envtest runs the
	// chapter's unit tests, on controller-runtime's fake client, against
	// it, where they must pass, and its spec on an API server alone,
	// which must kill it.
	FakeClientMisses *FakeClientMiss
}

// FakeClientMiss is a bug that a fake client's tests let through and an
// API server catches.
type FakeClientMiss struct {
	// Mutant names the patch in the chapter's mutants/; Lacks says what
	// the fake client lacks, for the reader.
	Mutant, Lacks string
}

// TooLow is a lesson spec run one rung lower than it needs, and how it
// must fail there.
type TooLow struct {
	// Spec is the spec's full text; Check the deciding check it must fail
	// in, with a message that contains Message.
	Spec, Check, Message string
	// Lacks is what the rung lacks, for the reader.
	Lacks string
}

// All lists every chapter, in order, numbered from 1 with no gap.
var All = []Chapter{
	{Number: 1, Slug: "create-pods", FakeClientMisses: &FakeClientMiss{
		Mutant: "replicas-may-be-negative",
		Lacks:  "validation: the CRD's schema is the API server's, and a fake client stores whatever it is given",
	}},
	{Number: 2, Slug: "finalizer-tracking", APIServerRung: true},
	{Number: 3, Slug: "owner-references", TooLow: &TooLow{
		Spec:    "A Redis has its pods removed by the garbage collector when it goes without the operator",
		Check:   "none of the Redis' pods is left",
		Message: "the garbage collector did not delete the pods",
		Lacks:   "the garbage collector, which runs in kube-controller-manager",
	}},
	{Number: 4, Slug: "watch-pod-deletes", APIServerRung: true},
	{Number: 5, Slug: "rebuild-pods"},
	{Number: 6, Slug: "scale-and-status"},
	{Number: 7, Slug: "idiomatic"},
	{Number: 8, Slug: "own-pods"},
	{Number: 9, Slug: "at-scale"},
	{Number: 10, Slug: "in-cluster", InCluster: true},
	{Number: 11, Slug: "admission", InCluster: true, Webhook: true},
	// Chapter 11's operator under faults, one kind of fault a chapter:
	// what the chapter adds is in its suite and the operator's test build.
	{Number: 12, Slug: "crash-every-write", InCluster: true, Webhook: true, Faults: true, ProvedByMutants: true},
	{Number: 13, Slug: "cache-behind", InCluster: true, Webhook: true, Faults: true, ProvedByMutants: true},
	{Number: 14, Slug: "apiserver-away", InCluster: true, Webhook: true, Faults: true, ProvedByMutants: true},
	// Chapter 9's operator on client-go alone, to show what
	// controller-runtime is made of.
	{Number: 15, Slug: "under-the-hood", Rewrites: 9},
}

// Shipped is the number of the chapter the operator runs unless another
// is asked for, whose role and webhook configuration config/ holds: the
// course's last chapter on controller-runtime.
const Shipped = 14

// Name is the chapter's directory name, NN-slug.
func (c Chapter) Name() string { return fmt.Sprintf("%02d-%s", c.Number, c.Slug) }

// Dir is the chapter's directory, relative to the repository's root.
func (c Chapter) Dir() string { return "chapters/" + c.Name() }

// Base is the chapter that c builds on, whose code its diff is against:
// the one it rewrites, or the one before.
func (c Chapter) Base() int {
	if c.Rewrites != 0 {
		return c.Rewrites
	}
	return c.Number - 1
}

// Latest is the last chapter.
func Latest() Chapter { return All[len(All)-1] }

// Get returns chapter n.
func Get(n int) (Chapter, error) {
	if n < 1 || n > len(All) {
		return Chapter{}, rangeError(strconv.Itoa(n))
	}
	return All[n-1], nil
}

// Parse returns the chapter a number names, as a learner types it: 5 or
// 05 (digits only). One rule and one message for every tool that takes
// one.
func Parse(s string) (Chapter, error) {
	n, err := number(s)
	if err != nil {
		return Chapter{}, rangeError(s)
	}
	c, err := Get(n)
	if err != nil {
		return Chapter{}, rangeError(s)
	}
	return c, nil
}

// Set makes *Chapter a flag.Value: a tool's --chapter flag is parsed
// (Parse) where the tool reads its flags, and travels as a Chapter.
func (c *Chapter) Set(s string) error {
	p, err := Parse(s)
	if err != nil {
		return err
	}
	*c = p
	return nil
}

// String is the chapter's number, as a flag shows it ("" for none).
func (c *Chapter) String() string {
	if c == nil || c.Number == 0 {
		return ""
	}
	return strconv.Itoa(c.Number)
}

func rangeError(got string) error {
	return fmt.Errorf("a chapter is a number from 1 to %d, got %q", len(All), got)
}

// First returns the first chapter that has what has asks for (InCluster,
// say), and false if none has it.
func First(has func(Chapter) bool) (Chapter, bool) {
	for _, c := range All {
		if has(c) {
			return c, true
		}
	}
	return Chapter{}, false
}

// MakeInclude is scripts/chapters.mk: the rows cs of the table as Make
// variables, each a list of chapter numbers, with shipped the chapter
// that runs unless another is asked for. The course's has every row
// (make manifests writes it); a chapter branch's has its own.
func MakeInclude(cs []Chapter, shipped int) string {
	list := func(has func(Chapter) bool, f func(Chapter) string) string {
		var l []string
		for _, c := range cs {
			if has(c) {
				l = append(l, f(c))
			}
		}
		return strings.Join(l, " ")
	}
	all := func(Chapter) bool { return true }
	number := func(c Chapter) string { return strconv.Itoa(c.Number) }
	var b strings.Builder
	b.WriteString("# The table of chapters (the course's chapters/chapters.go) for Make.\n")
	b.WriteString("# Generated; do not edit. Each variable but the first two lists\n")
	b.WriteString("# chapter numbers.\n")
	set := func(name, value string) {
		b.WriteString(strings.TrimSpace(name + " := " + value))
		b.WriteString("\n")
	}
	set("CHAPTER_NAMES", list(all, Chapter.Name))
	set("SHIPPED_CHAPTER", strconv.Itoa(shipped))
	set("REWRITES", list(func(c Chapter) bool { return c.Rewrites != 0 }, number))
	set("IN_CLUSTER_CHAPTERS", list(func(c Chapter) bool { return c.InCluster }, number))
	set("WEBHOOK_CHAPTERS", list(func(c Chapter) bool { return c.Webhook }, number))
	set("FAULTS_CHAPTERS", list(func(c Chapter) bool { return c.Faults }, number))
	set("PROVED_BY_MUTANTS", list(func(c Chapter) bool { return c.ProvedByMutants }, number))
	set("API_SERVER_RUNG_CHAPTERS", list(func(c Chapter) bool { return c.APIServerRung }, number))
	set("TOO_LOW_CHAPTERS", list(func(c Chapter) bool { return c.TooLow != nil }, number))
	set("FAKE_CLIENT_MISSES_CHAPTERS", list(func(c Chapter) bool { return c.FakeClientMisses != nil }, number))
	return b.String()
}
