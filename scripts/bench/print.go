package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// percentile returns the q-quantile (0 < q <= 1) of samples, the nearest
// rank; NaN for no samples. Below 100 samples the 0.99-quantile is the
// largest sample.
func percentile(samples []float64, q float64) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(samples))
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// excessBounds returns, for each quantile in qs, how far the quantile of
// samples a is above b's at least, with 95% confidence: the 5th
// percentile of the difference over bootstrap resamples of both. At most
// 0, a is not above b by more than chance explains: two targets whose pods
// wait for the same nodes have sample quantiles that differ from run to
// run, whichever is faster. The resampling is seeded, so a report prints
// the same verdict every time. NaN for no samples.
func excessBounds(a, b []float64, qs ...float64) []float64 {
	bounds := make([]float64, len(qs))
	if len(a) == 0 || len(b) == 0 {
		for i := range bounds {
			bounds[i] = math.NaN()
		}
		return bounds
	}
	const resamples = 2000
	rng := rand.New(rand.NewPCG(1, 2))
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	diffs := make([][]float64, len(qs))
	for range resamples {
		for j := range ra {
			ra[j] = a[rng.IntN(len(a))]
		}
		for j := range rb {
			rb[j] = b[rng.IntN(len(b))]
		}
		for i, q := range qs {
			diffs[i] = append(diffs[i], percentile(ra, q)-percentile(rb, q))
		}
	}
	for i := range qs {
		bounds[i] = percentile(diffs[i], .05)
	}
	return bounds
}

const (
	sts = "StatefulSet"
	rs  = "ReplicaSet"
)

// print writes the report as one table, with the ratios to the
// StatefulSet and the ReplicaSet controllers (below 1 is faster or
// cheaper), then whether the latest chapter meets its targets.
func (b *bench) print(out io.Writer) {
	r := b.report
	m := r.Machine
	c := r.Config
	fmt.Fprintf(out, "\nRedis operator benchmark, %s\n", m.Date)
	fmt.Fprintf(out, "machine: %s, %d CPUs, %.1f GiB; %s/%s, %s\n", m.CPU, m.CPUs, m.MemoryGiB, m.OS, m.Arch, m.Go)
	fmt.Fprintf(out, "cluster: %s (nodes %s, room for %d more pods), Kubernetes %s\n", m.Cluster, strings.Join(m.Nodes, ", "), m.PodSlots, m.Kubernetes)
	fmt.Fprintf(out, "%d deletes per target and kind after %d warm-up rounds; %d objects of %d pods; %d Redis per operator for API cost; steady state watched %s\n\n",
		c.Samples, c.Warmup, c.Objects, replicas, c.APIObjects, c.Steady)

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(cells ...any) {
		for _, c := range cells {
			fmt.Fprintf(tw, "%v\t", c)
		}
		fmt.Fprintln(tw)
	}
	fewSamples := false
	section := func(title string) {
		fmt.Fprintln(tw, title) // a line without cells: the columns restart below it
		row("", "", "n", "p50 ms", "p90 ms", "p99 ms", "p50/STS", "p99/STS", "p50/RS", "p99/RS")
	}
	latencies := func(set rebuildSet, samples func(*rebuildSamples) []float64, kind string) {
		for _, name := range r.Targets {
			if set[name] == nil {
				continue
			}
			s := samples(set[name])
			fewSamples = fewSamples || len(s) < 100
			p := func(q float64) float64 { return percentile(s, q) }
			peer := func(peer string, q float64) string {
				if set[peer] == nil {
					return "-"
				}
				return ratio(p(q), percentile(samples(set[peer]), q))
			}
			row("  "+kind, name, len(s), f1(p(.5)), f1(p(.9)), f1(p(.99)), peer(sts, .5), peer(sts, .99), peer(rs, .5), peer(rs, .99))
			kind = ""
		}
	}
	latency := func(s *rebuildSamples) []float64 { return s.LatencyMs }
	share := func(s *rebuildSamples) []float64 { return s.ShareMs }
	section("rebuild: delete call -> replacement ADDED")
	for _, k := range deleteKinds {
		latencies(r.Rebuild[k.name], latency, k.name)
	}
	section("controller's share: old pod's DELETED (ReplicaSet: its deletion's start) -> replacement ADDED")
	for _, k := range deleteKinds {
		latencies(r.Rebuild[k.name], share, k.name)
	}
	if len(r.Churn) > 0 {
		section(fmt.Sprintf("rebuild under churn: a delete every %s while %d objects converge", c.ChurnInterval, c.Objects))
		latencies(r.Churn, latency, "grace-period=0")
	}
	tw.Flush()
	if fewSamples {
		fmt.Fprintln(out, "(a p99 of fewer than 100 samples is their largest)")
	}

	if len(r.Converge) > 0 {
		fmt.Fprintln(out)
		row(fmt.Sprintf("convergence, %d x %d pods", c.Objects, replicas), "exist s", "running s", "running/STS", "running/RS")
		running := func(name string) float64 {
			if cv := r.Converge[name]; cv != nil {
				return cv.RunningSeconds
			}
			return math.NaN()
		}
		for _, name := range r.Targets {
			if cv := r.Converge[name]; cv != nil {
				row(name, f1(cv.ExistSeconds), f1(cv.RunningSeconds), ratio(cv.RunningSeconds, running(sts)), ratio(cv.RunningSeconds, running(rs)))
			}
		}
		fmt.Fprintf(tw, "(in the order %s)\n", strings.Join(c.ConvergeOrder, ", "))
		tw.Flush()
		fmt.Fprintln(out)
		row("API cost", "req/reconcile", "steady writes/min", "steady requests", "ns deletion s", "reconciles", "errors", "requests by method and code")
		for _, name := range r.Targets {
			if a, ok := r.API[name]; ok {
				row(name, f1(a.RequestsPerReconcile), f1(a.SteadyWritesPerMinute), a.SteadyRequests,
					f1(a.NamespaceDeletionSecs), a.NamespaceDeletionReconcile, a.NamespaceDeletionErrors, byMethodCode(a.NamespaceDeletion))
			}
		}
		fmt.Fprintf(tw, "(the namespace deleted held %d Redis objects)\n", c.APIObjects+1)
		tw.Flush()
	}
	if len(r.Memory) > 0 {
		fmt.Fprintln(out)
		row("operator memory, MiB", "idle RSS", "idle heap", fmt.Sprintf("RSS, %d unrelated pods", c.UnrelatedPods), "heap, unrelated pods", "heap growth")
		for _, name := range r.Targets {
			if mem, ok := r.Memory[name]; ok {
				row(name, f1(mem.IdleRSSMiB), f1(mem.IdleHeapMiB), f1(mem.UnrelatedRSSMiB), f1(mem.UnrelatedHeapMiB), fmt.Sprintf("%+.0f%%", 100*growth(mem)))
			}
		}
		tw.Flush()
	}

	fmt.Fprintf(out, "\nchapter %d's targets:\n", c.NewChapter)
	for _, v := range r.verdicts() {
		mark := "PASS"
		if !v.ok {
			mark = "FAIL"
		}
		fmt.Fprintf(out, "  %s  %s: %s\n", mark, v.target, v.measured)
	}
}

// verdict is one target of the latest chapter and what was measured.
type verdict struct {
	target, measured string
	ok               bool
}

// verdicts checks the latest chapter against the targets of the
// benchmark's issue, for the measurements that ran.
func (r report) verdicts() []verdict {
	newName := fmt.Sprintf("chapter %d", r.Config.NewChapter)
	oldName := fmt.Sprintf("chapter %d", r.Config.OldChapter)
	var out []verdict
	for _, k := range deleteKinds {
		set := r.Rebuild[k.name]
		if set[newName] == nil || set[sts] == nil {
			continue
		}
		ok := true
		var ours, theirs, bounds []string
		a, b := set[newName].LatencyMs, set[sts].LatencyMs
		qs := []float64{.5, .9, .99}
		for i, excess := range excessBounds(a, b, qs...) {
			ok = ok && excess <= 0
			ours, theirs = append(ours, f1(percentile(a, qs[i]))), append(theirs, f1(percentile(b, qs[i])))
			bounds = append(bounds, fmt.Sprintf("%+.1f", excess))
		}
		out = append(out, verdict{
			target: fmt.Sprintf("rebuild p50/p90/p99, %s, at most the StatefulSet's beyond chance (95%% lower bound of the excess at most 0)", k.name),
			measured: fmt.Sprintf("%s ms against %s ms; excess at least %s ms",
				strings.Join(ours, "/"), strings.Join(theirs, "/"), strings.Join(bounds, "/")),
			ok: ok,
		})
	}
	for _, k := range deleteKinds {
		if s := r.Rebuild[k.name][newName]; s != nil {
			p99 := percentile(s.ShareMs, .99)
			out = append(out, verdict{
				target:   fmt.Sprintf("controller's share p99, %s, under 20 ms", k.name),
				measured: f1(p99) + " ms", ok: p99 < 20,
			})
		}
	}
	if cv, peer := r.Converge[newName], r.Converge[sts]; cv != nil && peer != nil {
		out = append(out, verdict{
			target: fmt.Sprintf("%d x %d pods running in at most half the StatefulSet's time", r.Config.Objects, replicas),
			measured: fmt.Sprintf("%.1f s against %.1f s (they existed after %.1f s against %.1f s)",
				cv.RunningSeconds, peer.RunningSeconds, cv.ExistSeconds, peer.ExistSeconds),
			ok: cv.RunningSeconds <= peer.RunningSeconds/2,
		})
	}
	if a := r.API[newName]; a != nil {
		// A watch that an informer renews is a request too: client-go
		// ends each after 5 to 10 minutes and starts another.
		renewals := informers * math.Ceil(r.steadyMinutes()/5)
		gets := a.SteadyRequests - a.SteadyWritesPerMinute*r.steadyMinutes()
		out = append(out, verdict{
			target: fmt.Sprintf("steady state: no write, no reconcile, and no request but the %d informers' watch renewals (at most %.0f in %s)",
				informers, renewals, r.Config.Steady),
			measured: fmt.Sprintf("%.0f writes, %.0f reconciles, %.0f requests", a.SteadyWritesPerMinute*r.steadyMinutes(), a.SteadyReconciles, a.SteadyRequests),
			ok:       a.SteadyWritesPerMinute == 0 && a.SteadyReconciles == 0 && gets <= renewals,
		})
		refused := a.NamespaceDeletion["POST 403"]
		out = append(out, verdict{
			target: "namespace deletion: no refused create retried (no reconcile error, so no requeue; at most one refused POST per reconcile)",
			measured: fmt.Sprintf("%.0f refused POSTs in %.0f reconciles, %.0f reconcile errors, for %d Redis",
				refused, a.NamespaceDeletionReconcile, a.NamespaceDeletionErrors, a.NamespaceDeletionRedis),
			ok: a.NamespaceDeletionErrors == 0 && refused <= a.NamespaceDeletionReconcile,
		})
	}
	if mem, old := r.Memory[newName], r.Memory[oldName]; mem != nil && old != nil {
		out = append(out, verdict{
			target: fmt.Sprintf("Go heap within 10%% with %d unrelated pods, where %s's grows", r.Config.UnrelatedPods, oldName),
			measured: fmt.Sprintf("%+.0f%% (%.1f to %.1f MiB), %s %+.0f%%",
				100*growth(mem), mem.IdleHeapMiB, mem.UnrelatedHeapMiB, oldName, 100*growth(old)),
			ok: math.Abs(growth(mem)) <= 0.10 && growth(old) > 0.10,
		})
	}
	return out
}

// informers is how many watches each operator keeps: Redis objects and
// pods.
const informers = 2

func (r report) steadyMinutes() float64 {
	d, err := time.ParseDuration(r.Config.Steady)
	if err != nil {
		return math.NaN()
	}
	return d.Minutes()
}

func growth(m *memory) float64 { return m.UnrelatedHeapMiB/m.IdleHeapMiB - 1 }

// byMethodCode prints request counts as "POST 201: 12, GET 200: 3", the
// largest first.
func byMethodCode(m map[string]float64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b))
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %.0f", k, m[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func f1(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func ratio(a, b float64) string {
	if b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}
