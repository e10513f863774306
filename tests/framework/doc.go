// Package framework is what the chapters' end-to-end suites share, in
// files by what they are about (a chapter's branch has those its
// chapters need):
//
//   - the suite: framework.go (its Env, set up as the chapter's row of
//     the table says, namespaces, timing, the lesson's marks), parallel.go (specs on several processes),
//     cluster.go (the cluster and the repository), dump.go (what a failed
//     spec reports);
//   - the cluster: proxy.go (reads and assertions through a client),
//     kubectl.go (the real kubectl, as a learner types it);
//   - the operator on the host: operator.go (a process under its own
//     RBAC, its metrics), reconcilelog.go (its reconciles, read from its
//     log), trace.go (one pod deletion followed through its log),
//     death.go (an operator that exits by itself or panics fails the
//     spec), replicas.go (several at once, each its own process, log and
//     death check);
//   - the operator deployed, for the chapters that run in the cluster:
//     deployed.go (make deploy, its replicas), webhook.go (its webhook
//     and certificates), leasewatch.go (leader election, read from the
//     Lease);
//   - the test build that injects faults, for the chapters that have
//     one: faults.go, and scenario.go (the scenario the fault chapters
//     run, and the state each step must end in);
//   - the specs several chapters prove, which a later chapter's suite
//     carries as its row says: behaviour.go and
//     behaviour_steps.go (rebuild, scale, status, ...), nofinalizer.go
//     (the owner reference alone, and finalizers left from before),
//     ownpods.go (a cache of the operator's own pods).
package framework
