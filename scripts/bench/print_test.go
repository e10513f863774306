package main

import (
	"encoding/json"
	"flag"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"example.com/redis-operator/chapters"
)

func TestPercentile(t *testing.T) {
	samples := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6} // 1..10, unsorted
	for _, tc := range []struct {
		q    float64
		want float64
	}{{.5, 5}, {.9, 9}, {.99, 10}, {1, 10}, {.01, 1}} {
		if got := percentile(samples, tc.q); got != tc.want {
			t.Errorf("percentile(1..10, %v) = %v, want %v (nearest rank)", tc.q, got, tc.want)
		}
	}
	if samples[0] != 5 {
		t.Error("percentile sorted the caller's samples")
	}
	if !math.IsNaN(percentile(nil, .5)) {
		t.Error("percentile of no samples is not NaN")
	}
}

func TestBinomialTail(t *testing.T) {
	for _, tc := range []struct {
		k, m int
		want float64
	}{{0, 10, 1}, {6, 6, 1. / 64}, {9, 10, 11. / 1024}, {1, 0, 0}, {0, 0, 1}, {60, 100, 0.0284439668}} {
		if got := binomialTail(tc.k, tc.m); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("binomialTail(%d, %d) = %v, want %v", tc.k, tc.m, got, tc.want)
		}
	}
}

func TestSlowerTests(t *testing.T) {
	theirs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	ours := []float64{1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1}
	// Ours is slower in every round. Of both together, the p50 is 10:
	// ours is above it in all 10 rounds, theirs in none; the p90 is 1008,
	// with 2 rounds above it; the slowest 6 are all ours. The 11th sample
	// is from a round that the run did not finish: it is left out.
	want := []signTest{{"p50", 10, 10, 1. / 1024}, {"p90", 2, 2, 1. / 4}, {"slowest 6", 6, 6, 1. / 64}}
	if got := slowerTests(ours, theirs); !slices.EqualFunc(got, want, closeTest) {
		t.Errorf("slowerTests(always slower) = %v, want %v", got, want)
	}
	for _, tc := range slowerTests(ours, theirs) {
		if tc.name != "p90" && !tc.failed() {
			t.Errorf("%s: %v did not fail", tc.name, tc)
		}
	}
	want = []signTest{{"p50", 0, 10, 1}, {"p90", 0, 2, 1}, {"slowest 6", 0, 6, 1}}
	if got := slowerTests(theirs, ours); !slices.EqualFunc(got, want, closeTest) {
		t.Errorf("slowerTests(always faster) = %v, want %v", got, want)
	}
	// Equal in every round: no round has one rebuild above a threshold
	// and not the other.
	want = []signTest{{"p50", 0, 0, 1}, {"p90", 0, 0, 1}, {"slowest 6", 0, 0, 1}}
	if got := slowerTests(theirs, theirs); !slices.EqualFunc(got, want, closeTest) {
		t.Errorf("slowerTests(equal) = %v, want %v", got, want)
	}
}

func closeTest(a, b signTest) bool {
	return a.name == b.name && a.slower == b.slower && a.rounds == b.rounds && math.Abs(a.p-b.p) < 1e-9
}

// gracefulMs draws a rebuild after a graceful delete: the node stops the
// old pod in 0.1 to 2 s, mostly under 1.2 s. With a round's load
// (rounds), p50/p90/p99 are about 710/1180/1900 ms, near the
// StatefulSet's 639/1196/1945 in chapter 7's README.
func gracefulMs(rng *rand.Rand) float64 {
	stop := 100 + 1100*rng.Float64()
	if rng.Float64() < .15 {
		stop = 100 + 1900*rng.Float64()
	}
	return stop + 5*rng.NormFloat64()
}

// forcedMs draws a rebuild after a grace-0 delete: with a round's load,
// p50/p90/p99 about 18/24/31 ms (the StatefulSet's 17/21/30 in the
// README).
func forcedMs(rng *rand.Rand) float64 { return 10 + 7*rng.Float64() + 3*rng.ExpFloat64() }

// rounds draws n rounds of rebuilds of two targets, ours changed by
// slower. Both rebuilds of a round wait for the same machine, which is
// busier in some rounds than in others: a load of load ms on average.
func rounds(rng *rand.Rand, n int, draw func(*rand.Rand) float64, load float64, slower func(*rand.Rand, float64) float64) (ours, theirs []float64) {
	for range n {
		l := load * rng.ExpFloat64()
		ours = append(ours, slower(rng, draw(rng)+l))
		theirs = append(theirs, draw(rng)+l)
	}
	return ours, theirs
}

// TestRebuildRule measures how often the rebuild verdict is wrong, on
// synthetic samples of the default number of rounds. Measured with this
// seed, graceful and grace-period=0: equally fast controllers FAIL in
// 4.4% and 3.9% of runs (Bonferroni bounds it at 4.9%); a chapter with 3%
// of its rebuilds 1.5 s slower PASSes in 1.3% and 0% (with a sign test at
// the p99 for the tail, in 12.9% and 0.7%); one 30% slower at every
// quantile PASSes in none.
func TestRebuildRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	same := func(_ *rand.Rand, ms float64) float64 { return ms }
	tail := func(rng *rand.Rand, ms float64) float64 {
		if rng.Float64() < .03 {
			return ms + 1500
		}
		return ms
	}
	shift := func(_ *rand.Rand, ms float64) float64 { return 1.3 * ms }
	fails := func(tests []signTest) bool { return slices.ContainsFunc(tests, signTest.failed) }
	// The rule with a sign test at the p99 of both for the tail, to show
	// why the tail test is the slowest 6 instead.
	p99Tests := func(ours, theirs []float64) []signTest {
		tests := slowerTests(ours, theirs)
		tests[2] = signTestAt("p99", ours, theirs, percentile(slices.Concat(ours, theirs), .99))
		return tests
	}
	for _, k := range []struct {
		name string
		draw func(*rand.Rand) float64
		load float64
	}{{"graceful", gracefulMs, 20}, {"grace-period=0", forcedMs, 2}} {
		// Enough runs for a rate of 4% to be measured within 0.3%.
		const sameRuns, slowerRuns = 4000, 1000
		var falseFail, tailPass, p99TailPass, shiftPass int
		for run := range sameRuns {
			if fails(slowerTests(rounds(rng, defaultSamples, k.draw, k.load, same))) {
				falseFail++
			}
			if run >= slowerRuns {
				continue
			}
			ours, theirs := rounds(rng, defaultSamples, k.draw, k.load, tail)
			if !fails(slowerTests(ours, theirs)) {
				tailPass++
			}
			if !fails(p99Tests(ours, theirs)) {
				p99TailPass++
			}
			if !fails(slowerTests(rounds(rng, defaultSamples, k.draw, k.load, shift))) {
				shiftPass++
			}
		}
		sameRate, tailRate, shiftRate := float64(falseFail)/sameRuns, float64(tailPass)/slowerRuns, float64(shiftPass)/slowerRuns
		t.Logf("%s, %d rounds: equally fast FAIL in %.1f%% of %d runs; of %d runs, 3%% of rebuilds 1.5 s slower PASS in %.1f%% (%.1f%% with a p99 test for the tail), 30%% slower in %.1f%%",
			k.name, defaultSamples, 100*sameRate, sameRuns, slowerRuns, 100*tailRate, 100*float64(p99TailPass)/slowerRuns, 100*shiftRate)
		if sameRate >= familyAlpha {
			t.Errorf("%s: equally fast controllers FAIL in %.1f%% of runs, want under 5%%", k.name, 100*sameRate)
		}
		if tailRate >= .05 {
			t.Errorf("%s: a chapter with 3%% of its rebuilds 1.5 s slower PASSes in %.1f%% of runs, want under 5%%", k.name, 100*tailRate)
		}
		if shiftRate >= .05 {
			t.Errorf("%s: a chapter 30%% slower PASSes in %.1f%% of runs, want under 5%%", k.name, 100*shiftRate)
		}
	}
}

// steps returns n samples from base, step apart.
func steps(n int, base, step float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = base + float64(i)*step
	}
	return s
}

func TestVerdicts(t *testing.T) {
	samples := func(latency, share []float64) *rebuildSamples {
		return &rebuildSamples{LatencyMs: latency, ShareMs: share}
	}
	node := steps(defaultSamples, 100, 3) // 100 to 1900 ms, as a graceful delete waits for the node
	r := report{
		Config: reportConfig{OldChapters: []int{5, 7}, NewChapter: 9, Objects: 10, Steady: "1m0s"},
		Rebuild: map[string]rebuildSet{
			// The same in every round.
			"graceful": {"chapter 9": samples(node, steps(defaultSamples, 3, .01)), sts: samples(node, steps(defaultSamples, 3, .01))},
			// 10 ms slower in every round. And a share p99 of 22 ms.
			"grace-period=0": {"chapter 9": samples(steps(defaultSamples, 20, .01), steps(defaultSamples, 16, .01)), sts: samples(steps(defaultSamples, 10, .01), steps(defaultSamples, 3, .01))},
		},
		// Chapter 7's rebuilds under churn wait behind the converging
		// objects; the verdict is chapter 9's alone.
		Churn: rebuildSet{
			"chapter 9": samples(steps(150, 220, 5), steps(150, 20, 5)),
			"chapter 7": samples(steps(150, 220, 300), steps(150, 20, 300)),
		},
		Converge: map[string]*converge{"chapter 9": {RunningSeconds: 10}, sts: {RunningSeconds: 20}},
		API: map[string]*apiCost{"chapter 9": {
			SteadyState:       &SteadyState{Requests: 2},
			NamespaceDeletion: &NamespaceDeletion{Requests: map[string]float64{"POST 403": 12}, Reconciles: 11, Redis: 11},
		}},
		// Against chapter 7's heap, which does not grow, the verdict
		// would FAIL: it compares with the first old chapter, chapter 5.
		Memory: map[string]*memory{
			"chapter 9": {IdleHeapMiB: 4, UnrelatedMemory: &UnrelatedMemory{UnrelatedHeapMiB: 4.2}},
			"chapter 7": {IdleHeapMiB: 4, UnrelatedMemory: &UnrelatedMemory{UnrelatedHeapMiB: 4}},
			"chapter 5": {IdleHeapMiB: 4, UnrelatedMemory: &UnrelatedMemory{UnrelatedHeapMiB: 26}},
		},
	}
	got := map[string]bool{}
	for _, v := range r.verdicts() {
		got[v.target] = v.ok
	}
	want := map[string]bool{
		"rebuild, graceful, not slower than the StatefulSet beyond chance at p50, p90 or in the slowest 6":                          true,
		"rebuild, grace-period=0, not slower than the StatefulSet beyond chance at p50, p90 or in the slowest 6":                    false,
		"controller's share p99, graceful, under 20 ms (one run's sample p99, not tested against chance)":                           true,
		"controller's share p99, grace-period=0, under 20 ms (one run's sample p99, not tested against chance)":                     false,
		"10 x 3 pods running in at most half the StatefulSet's time (one run of each, not tested against chance)":                   true, // 10 s against 20 s
		"steady state: no write, no reconcile, and no request but the 2 informers' watch renewals (at most 2 in 1m0s)":              true,
		"namespace deletion: no refused create retried (no reconcile error, so no requeue; at most one refused POST per reconcile)": false, // 12 refused in 11 reconciles
		"Go heap within 10% with 0 unrelated pods, where chapter 5's grows":                                                         true,
		"rebuild under churn: controller's share p99 under 1 s":                                                                     true, // 760 ms (960 ms from the delete call); chapter 7's 44.4 s does not count
	}
	if !maps.Equal(got, want) {
		t.Errorf("verdicts:\n got %v\nwant %v", got, want)
	}
}

func TestChurnVerdict(t *testing.T) {
	for _, tc := range []struct {
		samples  []float64 // the controller's share
		latency  []float64 // from the delete call
		measured string
		ok       bool
	}{
		{steps(150, 20, 6), steps(150, 220, 6), "p99 908.0 ms of 150 samples; from the delete call, p99 1108.0 ms; one run's sample p99, not tested against chance", true},
		{steps(150, 20, 7), steps(150, 220, 7), "p99 1056.0 ms of 150 samples; from the delete call, p99 1256.0 ms; one run's sample p99, not tested against chance", false},
		// The p99 of 99 samples is their largest, 100 + 98*10 ms.
		{steps(99, 100, 10), nil, "p99 1080.0 ms of 99 samples (fewer than 100: the p99 is their largest); one run's sample p99, not tested against chance", false},
		{[]float64{40, 999.9}, []float64{50, 1200}, "p99 999.9 ms of 2 samples (fewer than 100: the p99 is their largest); from the delete call, p99 1200.0 ms; one run's sample p99, not tested against chance", true},
	} {
		if measured, ok := churnVerdict(tc.samples, tc.latency); measured != tc.measured || ok != tc.ok {
			t.Errorf("churnVerdict(%d samples) = %q, %t; want %q, %t", len(tc.samples), measured, ok, tc.measured, tc.ok)
		}
	}
}

// TestNothingMeasured: a run stopped before its first measurement FAILs
// every target as not measured.
func TestNothingMeasured(t *testing.T) {
	r := report{Config: reportConfig{OldChapters: []int{5, 7}, NewChapter: 9}}
	for _, v := range r.verdicts() {
		if v.ok || v.measured != "not measured" {
			t.Errorf("%s: %s, PASS %t; want not measured, FAIL", v.target, v.measured, v.ok)
		}
	}
}

func TestRebuildVerdict(t *testing.T) {
	node := steps(100, 100, 19)
	if measured, ok := rebuildVerdict(node[:minRounds-1], node[:minRounds-1]); ok || !strings.Contains(measured, "too few to judge") {
		t.Errorf("rebuildVerdict of %d rounds = %q, %t; want too few to judge, FAIL", minRounds-1, measured, ok)
	}
	measured, ok := rebuildVerdict(node, node)
	if !ok || !strings.HasSuffix(measured, "; only 100 rounds: the slowest-6 test needs 600 to catch 3% of rebuilds 1.5 s slower") {
		t.Errorf("rebuildVerdict of 100 equal rounds = %q, %t; want PASS, and that 100 rounds are too few for the tail", measured, ok)
	}
}

// interrupted is the report of a quick run (2 rounds of deletes) stopped
// after convergence, in the API cost phase, as bench writes it: no steady
// state, no namespace deletion, no memory.
const interrupted = `{
  "config": {"Samples": 2, "OldChapters": [5, 7], "NewChapter": 9, "Objects": 10, "APIObjects": 10, "Steady": "10m0s", "ChurnInterval": "1s"},
  "targets": ["chapter 5", "chapter 7", "chapter 9", "StatefulSet", "ReplicaSet"],
  "rebuild": {
    "graceful": {"chapter 9": {"latencyMs": [700, 800], "shareMs": [5, 6]}, "StatefulSet": {"latencyMs": [650, 900], "shareMs": [5, 7]}},
    "grace-period=0": {"chapter 9": {"latencyMs": [15, 16], "shareMs": [5, 6]}, "StatefulSet": {"latencyMs": [16, 17], "shareMs": [7, 8]}}
  },
  "churn": {
    "ReplicaSet": {"latencyMs": [12, 13], "shareMs": [2, 3]},
    "chapter 9": {"latencyMs": [18, 25, 31], "shareMs": [4, 5, 6]},
    "StatefulSet": {"latencyMs": [14, 15], "shareMs": [3, 4]},
    "chapter 7": {"latencyMs": [4100, 9800], "shareMs": [4000, 9700]},
    "chapter 5": {"latencyMs": [3900, 8700], "shareMs": [3800, 8600]}
  },
  "converge": {"chapter 9": {"existSeconds": 8, "runningSeconds": 10}, "StatefulSet": {"existSeconds": 19, "runningSeconds": 20}},
  "api": {"chapter 5": {"requestsPerReconcile": 3.5}, "chapter 7": {"requestsPerReconcile": 3.2}, "chapter 9": {"requestsPerReconcile": 3.1}}
}`

func TestInterruptedReport(t *testing.T) {
	var r report
	if err := json.Unmarshal([]byte(interrupted), &r); err != nil {
		t.Fatal(err)
	}
	for _, v := range r.verdicts() {
		missing := strings.HasPrefix(v.target, "steady state") || strings.HasPrefix(v.target, "namespace deletion") ||
			strings.HasPrefix(v.target, "Go heap")
		if missing && (v.measured != "not measured" || v.ok) {
			t.Errorf("%s: %s, PASS %t; want not measured, FAIL", v.target, v.measured, v.ok)
		}
		if !missing && v.measured == "not measured" {
			t.Errorf("%s: not measured, but the report has it", v.target)
		}
	}
	var out strings.Builder
	(&bench{report: r}).print(&out)
	for _, line := range []string{
		"FAIL  steady state: no write, no reconcile, and no request but the 2 informers' watch renewals (at most 4 in 10m0s): not measured",
		"FAIL  namespace deletion: no refused create retried (no reconcile error, so no requeue; at most one refused POST per reconcile): not measured",
		"FAIL  Go heap within 10% with 0 unrelated pods, where chapter 5's grows: not measured",
		"PASS  rebuild under churn: controller's share p99 under 1 s: p99 6.0 ms of 3 samples (fewer than 100: the p99 is their largest); from the delete call, p99 31.0 ms; one run's sample p99, not tested against chance",
		"PASS  10 x 3 pods running in at most half the StatefulSet's time (one run of each, not tested against chance): 10.0 s against 20.0 s",
		"FAIL  rebuild, graceful, not slower than the StatefulSet beyond chance at p50, p90 or in the slowest 6: p50/p90/p99 700.0/800.0/800.0 ms against 650.0/900.0/900.0 ms (p99 not judged); only 2 rounds: too few to judge (at least 30)",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("the printed report has no %q:\n%s", line, out.String())
		}
	}
	// The churn rows, every target's, in the order of the targets.
	_, churn, _ := strings.Cut(out.String(), "rebuild under churn: a delete every 1s")
	churn, _, _ = strings.Cut(churn, "\n(")
	last := -1
	for _, name := range r.Targets {
		at := strings.Index(churn, name+" ")
		if at <= last {
			t.Errorf("the churn rows have no row for %s after the row of the target before it:\n%s", name, churn)
		}
		last = at
	}
}

// TestOldReport reads a report written when a run compared two chapters,
// with "OldChapter": 5.
func TestOldReport(t *testing.T) {
	const old = `{
  "config": {"Samples": 100, "OldChapter": 5, "NewChapter": 7, "UnrelatedPods": 5000, "Steady": "10m0s"},
  "targets": ["chapter 5", "chapter 7", "StatefulSet", "ReplicaSet"],
  "memory": {"chapter 5": {"IdleRSSMiB": 40, "IdleHeapMiB": 6, "UnrelatedRSSMiB": 90, "UnrelatedHeapMiB": 31},
             "chapter 7": {"IdleRSSMiB": 38, "IdleHeapMiB": 6, "UnrelatedRSSMiB": 39, "UnrelatedHeapMiB": 6.2}}
}`
	var r report
	if err := json.Unmarshal([]byte(old), &r); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Config.OldChapters, []int{5}) || r.Config.NewChapter != 7 || r.Config.Samples != 100 {
		t.Errorf("the old report's config read as %+v, want OldChapters [5], NewChapter 7, Samples 100", r.Config)
	}
	var out strings.Builder
	(&bench{report: r}).print(&out)
	line := "PASS  Go heap within 10% with 5000 unrelated pods, where chapter 5's grows: +3% (6.0 to 6.2 MiB), chapter 5 +417%"
	if !strings.Contains(out.String(), line) {
		t.Errorf("the printed report has no %q:\n%s", line, out.String())
	}
	// OldChapters, when there, wins: a report has only one of the two.
	if err := json.Unmarshal([]byte(`{"config": {"OldChapters": [5, 7], "OldChapter": 3}}`), &r); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Config.OldChapters, []int{5, 7}) {
		t.Errorf("OldChapters [5, 7] with OldChapter 3 read as %v", r.Config.OldChapters)
	}
}

func TestOldChaptersFlag(t *testing.T) {
	parse := func(args ...string) (chapterList, error) {
		fs := flag.NewFlagSet("bench", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		l := chapterList{5, 7}
		fs.Var(&l, "old-chapters", "")
		return l, fs.Parse(args)
	}
	for _, tc := range []struct {
		args []string
		want chapterList
	}{
		{nil, chapterList{5, 7}},
		{[]string{"--old-chapters=3"}, chapterList{3}},
		{[]string{"--old-chapters", "7, 5"}, chapterList{7, 5}},
	} {
		if got, err := parse(tc.args...); err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, %v; want %v", tc.args, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ value, want string }{
		{"", `entry 1 of "" is empty`},
		{"5,,7", `entry 2 of "5,,7" is empty`},
		{"5,", `entry 2 of "5," is empty`},
		{"5,seven", `a chapter is a number from 1 to ` + strconv.Itoa(len(chapters.All)) + `, got "seven"`},
		{"5,0", `, got "0"`},
		{"5,-7", `, got "-7"`},
		{"5," + strconv.Itoa(len(chapters.All)+1), `, got "` + strconv.Itoa(len(chapters.All)+1) + `"`},
		{"5,7,5", `chapter 5 is listed twice in "5,7,5"`},
	} {
		_, err := parse("--old-chapters", tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--old-chapters %q: %v; want an error with %q", tc.value, err, tc.want)
		}
	}
	c := config{oldChapters: chapterList{5, 7}, newChapter: 9}
	if err := c.checkChapters(); err != nil || !slices.Equal(c.chapters(), []int{5, 7, 9}) {
		t.Errorf("chapters 5,7 and 9: %v, %v; want chapters 5, 7, 9", c.chapters(), err)
	}
	c.newChapter = 7
	want := "--old-chapters=5,7 lists chapter 7, the chapter measured (--new-chapter)"
	if err := c.checkChapters(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("--old-chapters=5,7 --new-chapter=7: %v; want an error with %q", err, want)
	}
}

func TestReportJSON(t *testing.T) {
	r := report{
		API: map[string]*apiCost{
			"measured zero": {SteadyState: &SteadyState{}, NamespaceDeletion: &NamespaceDeletion{}},
			"not measured":  {RequestsPerReconcile: 3},
		},
		Memory: map[string]*memory{
			"measured zero": {UnrelatedMemory: &UnrelatedMemory{}},
			"not measured":  {IdleHeapMiB: 4},
		},
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back report
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if a := back.API["measured zero"]; a.SteadyState == nil || a.NamespaceDeletion == nil || back.Memory["measured zero"].UnrelatedMemory == nil {
		t.Errorf("zeros measured came back as not measured: %s", data)
	}
	if a := back.API["not measured"]; a.SteadyState != nil || a.NamespaceDeletion != nil || back.Memory["not measured"].UnrelatedMemory != nil {
		t.Errorf("what was not measured came back as measured: %s", data)
	}
	// A report written before the phases were split out still reads.
	old := `{"api": {"chapter 7": {"requestsPerReconcile": 3.1, "steadyWritesPerMinute": 0, "steadyRequests": 2, "steadyReconciles": 0,
		"namespaceDeletionRequests": {"POST 403": 412}, "namespaceDeletionRedis": 101, "namespaceDeletionReconciles": 987,
		"namespaceDeletionReconcileErrors": 0, "namespaceDeletionSeconds": 41.8}}}`
	if err := json.Unmarshal([]byte(old), &back); err != nil {
		t.Fatal(err)
	}
	if a := back.API["chapter 7"]; a.SteadyState == nil || a.SteadyState.Requests != 2 || a.NamespaceDeletion == nil || a.NamespaceDeletion.Requests["POST 403"] != 412 {
		t.Errorf("an earlier report read as %+v", a)
	}
}

func TestFit(t *testing.T) {
	withObjects := func(objects int) config {
		return config{oldChapters: chapterList{5, 7}, newChapter: 9, objects: objects}
	}
	c := withObjects(0)
	if fixed := c.fixedPods(); fixed != 5*replicas+4 {
		t.Errorf("fixedPods() = %d for five targets, want %d", fixed, 5*replicas+4)
	}
	if err := c.fit(4000); err != nil || c.objects != 100 || c.apiObjects != 100 {
		t.Errorf("fit(4000) = %d objects, %d API objects, %v; want 100, 100", c.objects, c.apiObjects, err)
	}
	// Convergence runs one target's objects at a time, API cost the three
	// operators' at once.
	c = withObjects(0)
	if err := c.fit(110); err != nil || c.objects != (110-c.fixedPods())/3 || c.apiObjects != (110-c.fixedPods())/9 {
		t.Errorf("fit(110) = %d objects, %d API objects, %v; want what 110 pods hold", c.objects, c.apiObjects, err)
	}
	c = withObjects(1000)
	if err := c.fit(110); err == nil {
		t.Error("BENCH_N=1000 fit a node of 110 pods")
	}
	c = withObjects(0)
	if err := c.fit(c.fixedPods()); err == nil {
		t.Error("a cluster with no room for any object was accepted")
	}
}

func TestBackend(t *testing.T) {
	for _, tc := range []struct {
		cluster string
		nodes   []string
		want    string
	}{
		{"kind", []string{"redis-operator-control-plane"}, "kind"},
		{"auto", []string{"hollow-node-1"}, "local"},
		{"", []string{"redis-operator-control-plane"}, "kind"},
		{"", []string{"node-a"}, "existing"},
	} {
		if got := backend(tc.cluster, tc.nodes); got != tc.want {
			t.Errorf("backend(%q, %v) = %q, want %q", tc.cluster, tc.nodes, got, tc.want)
		}
	}
}

func TestTainted(t *testing.T) {
	node := func(taints ...corev1.Taint) *corev1.Node { return &corev1.Node{Spec: corev1.NodeSpec{Taints: taints}} }
	for _, tc := range []struct {
		node *corev1.Node
		want bool
	}{
		{node(), false},
		{node(corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule}), false},
		{node(corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}), true},
		{node(corev1.Taint{Key: "example.org/busy", Effect: corev1.TaintEffectPreferNoSchedule}), false},
	} {
		if got := tainted(tc.node); got != tc.want {
			t.Errorf("tainted(%v) = %t, want %t", tc.node.Spec.Taints, got, tc.want)
		}
	}
}
