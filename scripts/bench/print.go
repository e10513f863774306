package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
)

// percentile returns the q-quantile (0 < q <= 1) of samples, the nearest
// rank; NaN for no samples.
func percentile(samples []float64, q float64) float64 {
	if len(samples) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(samples))
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// print writes the report as one table, with each target's ratio to the
// StatefulSet controller (below 1 is faster).
func (b *bench) print(out io.Writer) {
	r := b.report
	m := r.Machine
	fmt.Fprintf(out, "\nRedis operator benchmark, %s\n", m.Date)
	fmt.Fprintf(out, "machine: %s/%s, %d CPUs, %s; cluster: %s, Kubernetes %s\n", m.OS, m.Arch, m.CPUs, m.Go, m.Cluster, m.Kubernetes)
	fmt.Fprintf(out, "%d deletes per target and kind, %d objects of %d pods\n\n", r.Config.Samples, r.Config.Objects, replicas)

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(cells ...any) {
		for _, c := range cells {
			fmt.Fprintf(tw, "%v\t", c)
		}
		fmt.Fprintln(tw)
	}
	row("rebuild, delete call -> replacement ADDED", "", "p50 ms", "p90 ms", "p99 ms", "p50 / StatefulSet", "p99 / StatefulSet")
	for _, k := range deleteKinds {
		set := r.Rebuild[k.name]
		sts := set["StatefulSet"].LatencyMs
		for _, name := range r.TargetOrder {
			s := set[name].LatencyMs
			row(k.name, name, f1(percentile(s, .5)), f1(percentile(s, .9)), f1(percentile(s, .99)),
				ratio(percentile(s, .5), percentile(sts, .5)), ratio(percentile(s, .99), percentile(sts, .99)))
		}
	}
	row()
	row("controller's share, old DELETED -> replacement ADDED", "", "p50 ms", "p90 ms", "p99 ms", "", "")
	for _, k := range deleteKinds {
		set := r.Rebuild[k.name]
		for _, name := range r.TargetOrder {
			s := set[name].ShareMs
			if len(s) == 0 {
				row(k.name, name, "-", "-", "-", "replaces at the delete's start", "")
				continue
			}
			row(k.name, name, f1(percentile(s, .5)), f1(percentile(s, .9)), f1(percentile(s, .99)), "", "")
		}
	}
	if len(r.Converge) > 0 {
		row()
		row(fmt.Sprintf("convergence, %d x %d pods exist", r.Config.Objects, replicas), "", "seconds", "", "", "/ StatefulSet", "")
		for _, name := range r.TargetOrder {
			row("", name, f1(r.Converge[name]), "", "", ratio(r.Converge[name], r.Converge["StatefulSet"]), "")
		}
		row()
		row("API cost", "", "req/reconcile", "steady writes/min", "steady requests", "ns deletion s", "ns deletion requests by code")
		for _, name := range r.TargetOrder {
			a, ok := r.API[name]
			if !ok {
				continue
			}
			row("", name, f1(a.RequestsPerReconcile), f1(a.SteadyWritesPerMinute), fmt.Sprint(a.SteadyRequests),
				f1(a.NamespaceDeletionSecs), fmt.Sprint(a.NamespaceDeletion))
		}
	}
	if len(r.Memory) > 0 {
		row()
		row("operator memory (MiB)", "", "idle RSS", "idle heap", fmt.Sprintf("RSS, %d unrelated pods", r.Config.UnrelatedPods), "heap, unrelated pods", "heap growth")
		for _, name := range r.TargetOrder {
			mem, ok := r.Memory[name]
			if !ok {
				continue
			}
			row("", name, f1(mem.IdleRSSMiB), f1(mem.IdleHeapMiB), f1(mem.UnrelatedRSSMiB), f1(mem.UnrelatedHeapMiB),
				fmt.Sprintf("%+.0f%%", 100*(mem.UnrelatedHeapMiB/mem.IdleHeapMiB-1)))
		}
	}
	tw.Flush()
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
