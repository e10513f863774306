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
	// directory's name (chapters/NN-slug); Title what it is about, as its
	// suite's report names it ("Chapter 5: rebuild pods").
	Number int
	Slug   string
	Title  string
	// Operator is how its suite runs the operator under test: on the
	// host for the whole suite (the zero value), deployed in the cluster,
	// or started, crashed and restarted by each spec (Suite's).
	Operator OperatorRun
	// Behaviours names the framework's shared behaviour specs that prove
	// what it teaches (tests/framework's behaviours), which a later
	// chapter's suite that Carries them runs too.
	Behaviours []string
	// Carries: its suite carries the Behaviours of the chapters before
	// it, unchanged, run against its operator.
	Carries bool
	// Rewrites is the chapter whose behaviour this one keeps, written
	// anew (0: none). Its lesson is its diff against that chapter, it has
	// no lesson spec (none can fail against the chapter it rewrites), its
	// exercise starts from its own package with its lesson taken out, and
	// its branch has that chapter's layout and is that branch's child.
	Rewrites int
	// InCluster: it runs in the cluster (make deploy deploys it: the
	// image, the Deployment, the manifests), and its branch has what
	// that needs. Where its suite runs it is Operator.
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
	// Bench is its part in make bench: measured, or a baseline the
	// measured chapter is compared with (none: not benchmarked).
	Bench BenchRole
	// BenchCheck: make bench-check times make check of its exercise,
	// solved: a chapter judged on the cluster and one judged on an API
	// server alone first (APIServerRung) keep both paths timed.
	BenchCheck bool
	// LaneStart: make prove-chapters' (and CI's) lanes, which prove
	// ranges of chapters side by side, each on a cluster of its own,
	// start at the first chapter and at each chapter so marked. The
	// suites from chapter 9 on take about as long as those before it.
	LaneStart bool
}

// BenchRole is a chapter's part in make bench.
type BenchRole int

const (
	// NotBenchmarked is the zero value.
	NotBenchmarked BenchRole = iota
	// BenchBaseline: a chapter the measured one is compared with.
	BenchBaseline
	// BenchMeasured: the chapter make bench measures by default.
	BenchMeasured
)

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
	{Number: 1, Slug: "create-pods", Title: "create pods", FakeClientMisses: &FakeClientMiss{
		Mutant: "replicas-may-be-negative",
		Lacks:  "validation: the CRD's schema is the API server's, and a fake client stores whatever it is given",
	}},
	{Number: 2, Slug: "finalizer-tracking", Title: "finalizer tracking", APIServerRung: true, BenchCheck: true},
	{Number: 3, Slug: "owner-references", Title: "owner references", Behaviours: []string{"foreign-pod"}, TooLow: &TooLow{
		Spec:    "A Redis has its pods removed by the garbage collector when it goes without the operator",
		Check:   "none of the Redis' pods is left",
		Message: "the garbage collector did not delete the pods",
		Lacks:   "the garbage collector, which runs in kube-controller-manager",
	}},
	{Number: 4, Slug: "watch-pod-deletes", Title: "watch pod deletes", APIServerRung: true},
	{Number: 5, Slug: "rebuild-pods", Title: "rebuild pods", Behaviours: []string{"rebuild"}, Bench: BenchBaseline, BenchCheck: true},
	{Number: 6, Slug: "scale-and-status", Title: "scale and status", Behaviours: []string{"scale", "status", "steady", "ended-pod"}},
	{Number: 7, Slug: "idiomatic", Title: "idiomatic", Behaviours: []string{"no-finalizer"}, Carries: true, Bench: BenchBaseline},
	{Number: 8, Slug: "own-pods", Title: "own pods", Behaviours: []string{"own-pods"}, Carries: true},
	{Number: 9, Slug: "at-scale", Title: "at scale", Behaviours: []string{"rebuild-first"}, Carries: true, Bench: BenchMeasured, LaneStart: true},
	{Number: 10, Slug: "in-cluster", Title: "in the cluster", InCluster: true, Operator: OperatorDeployed},
	{Number: 11, Slug: "admission", Title: "admission", InCluster: true, Webhook: true, Operator: OperatorDeployed},
	// Chapter 11's operator under faults, one kind of fault a chapter:
	// what the chapter adds is in its suite and the operator's test build.
	{Number: 12, Slug: "crash-every-write", Title: "crash after every write", InCluster: true, Webhook: true, Faults: true, ProvedByMutants: true, Operator: OperatorPerSpec},
	{Number: 13, Slug: "cache-behind", Title: "a cache behind and writes refused", InCluster: true, Webhook: true, Faults: true, ProvedByMutants: true, Operator: OperatorPerSpec},
	// The operator that ships, on the host for the behaviour it carries;
	// its own specs restart it, and the API server, their own way.
	{Number: 14, Slug: "apiserver-away", Title: "the API server goes away", InCluster: true, Webhook: true, Faults: true, ProvedByMutants: true, Carries: true},
	// Chapter 9's operator on client-go alone, to show what
	// controller-runtime is made of.
	{Number: 15, Slug: "under-the-hood", Title: "under the hood", Rewrites: 9, Carries: true},
}

// Shipped is the number of the chapter the operator runs unless another
// is asked for, whose role and webhook configuration config/ holds: the
// course's last chapter on controller-runtime.
const Shipped = 14

// Name is the chapter's directory name, NN-slug.
func (c Chapter) Name() string { return fmt.Sprintf("%02d-%s", c.Number, c.Slug) }

// Dir is the chapter's directory, relative to the repository's root.
func (c Chapter) Dir() string { return "chapters/" + c.Name() }

// Branch is the chapter's branch (make chapter-branches), without
// refs/heads/.
func (c Chapter) Branch() string { return "chapter/" + c.Name() }

// Base is the chapter that c builds on, whose code its diff is against:
// the one it rewrites, or the one before.
func (c Chapter) Base() int {
	if c.Rewrites != 0 {
		return c.Rewrites
	}
	return c.Number - 1
}

// SuiteDir is the directory of chapter n's end-to-end suite, relative to
// the repository's root.
func SuiteDir(n int) string { return "tests/" + SuiteName(n) }

// Suite is what the chapter's suite needs of its row (SuiteOf).
func (c Chapter) Suite() Suite {
	s := Suite{Number: c.Number, Title: c.Title, Operator: c.Operator, Faults: c.Faults}
	if c.Carries {
		for _, before := range All {
			if before.Number < c.Number {
				s.Carries = append(s.Carries, before.Behaviours...)
			}
		}
	}
	return s
}

// SuiteOf is what chapter n's suite needs of its row. A chapter's branch
// has a SuiteOf of its own, generated from its row (make
// chapter-branches), with this signature.
func SuiteOf(n int) (Suite, error) {
	c, err := Get(n)
	if err != nil {
		return Suite{}, err
	}
	return c.Suite(), nil
}

// RoleFile is the RBAC role generated from chapter n's markers, relative
// to the repository's root. A chapter's branch has a RoleFile of its own
// (config/rbac/role.yaml), with this signature.
func RoleFile(n int) (string, error) {
	c, err := Get(n)
	if err != nil {
		return "", err
	}
	return c.Dir() + "/role.yaml", nil
}

// Where returns the numbers of the chapters that have what has asks for,
// in order.
func Where(has func(Chapter) bool) []int {
	var ns []int
	for _, c := range All {
		if has(c) {
			ns = append(ns, c.Number)
		}
	}
	return ns
}

// Lanes are the ranges of chapters that make prove-chapters (and CI)
// prove side by side: from the first chapter and from each LaneStart to
// the chapter before the next, as FROM-TO.
func Lanes() []string { return lanes(All) }

func lanes(cs []Chapter) []string {
	if len(cs) == 0 {
		return nil
	}
	var l []string
	from := cs[0].Number
	for _, c := range cs[1:] {
		if c.LaneStart {
			l = append(l, fmt.Sprintf("%d-%d", from, c.Number-1))
			from = c.Number
		}
	}
	return append(l, fmt.Sprintf("%d-%d", from, cs[len(cs)-1].Number))
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
func Parse(s string) (Chapter, error) { return ParseFrom(s, 1) }

// ParseFrom is Parse for a tool that takes the chapters from min on
// (make diff-chapter: a chapter with one before it).
func ParseFrom(s string, min int) (Chapter, error) {
	n, err := number(s)
	if err != nil || n < min {
		return Chapter{}, rangeErrorFrom(min, s)
	}
	c, err := Get(n)
	if err != nil {
		return Chapter{}, rangeErrorFrom(min, s)
	}
	return c, nil
}

// ParseList reads a list of chapters separated by spaces, as Make
// passes one (TEST_CHAPTERS="10 11"); it must name one at least.
func ParseList(s string) ([]Chapter, error) {
	var cs []Chapter
	for _, f := range strings.Fields(s) {
		c, err := Parse(f)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("no chapter named: a list of chapter numbers from 1 to %d, as in \"10 11\"", len(All))
	}
	return cs, nil
}

// ParseRange reads a range of chapters FROM-TO (make prove-range
// RANGE=1-6): both chapters, FROM no later than TO.
func ParseRange(s string) (from, to Chapter, err error) {
	a, b, ok := strings.Cut(s, "-")
	if ok {
		from, err = Parse(a)
		if err == nil {
			to, err = Parse(b)
		}
	}
	if !ok || err != nil || from.Number > to.Number {
		return Chapter{}, Chapter{}, fmt.Errorf("%q is not a range of chapters FROM-TO within 1-%d, as in 1-6", s, len(All))
	}
	return from, to, nil
}

// ParseLanes reads lanes of chapters, ranges separated by spaces (make
// prove-chapters PROVE_LANES="1-8 9-15"): together they name each
// chapter once.
func ParseLanes(s string) ([]string, error) {
	seen := map[int]bool{}
	lanes := strings.Fields(s)
	for _, l := range lanes {
		from, to, err := ParseRange(l)
		if err != nil {
			return nil, err
		}
		for n := from.Number; n <= to.Number; n++ {
			if seen[n] {
				return nil, fmt.Errorf("lanes %q name chapter %d twice; name each chapter from 1 to %d once, as in %q", s, n, len(All), strings.Join(Lanes(), " "))
			}
			seen[n] = true
		}
	}
	if len(seen) != len(All) {
		return nil, fmt.Errorf("lanes %q leave chapters out; name each chapter from 1 to %d once, as in %q", s, len(All), strings.Join(Lanes(), " "))
	}
	return lanes, nil
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

func rangeError(got string) error { return rangeErrorFrom(1, got) }

func rangeErrorFrom(min int, got string) error {
	return fmt.Errorf("a chapter is a number from %d to %d, got %q", min, len(All), got)
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
	b.WriteString("# Generated; do not edit. Each variable but the first two and the\n")
	b.WriteString("# last lists chapter numbers; LANES lists ranges of them.\n")
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
	set("DEPLOYED_CHAPTERS", list(func(c Chapter) bool { return c.Operator == OperatorDeployed }, number))
	set("BENCH_CHECK_CHAPTERS", list(func(c Chapter) bool { return c.BenchCheck }, number))
	set("LANES", strings.Join(lanes(cs), " "))
	return b.String()
}
