package framework

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LeaseWatch records every state of the operator's Lease, in the order
// the API server stored them, from when it starts until it stops: what a
// poll can miss, such as a Lease released and taken again between two
// polls. Its goroutine alone writes states and err, until it closes
// done; Stop reads them after that.
type LeaseWatch struct {
	stop   context.CancelFunc
	done   chan struct{}
	states []coordinationv1.LeaseSpec
	err    error
}

// WatchLease starts a LeaseWatch with c. Its first state is the Lease as
// it is now.
func WatchLease(ctx context.Context, c client.WithWatch) (*LeaseWatch, error) {
	ctx, stop := context.WithCancel(ctx)
	w, err := c.Watch(ctx, &coordinationv1.LeaseList{}, client.InNamespace(OperatorNamespace),
		client.MatchingFields{"metadata.name": LeaseName})
	if err != nil {
		stop()
		return nil, fmt.Errorf("watching Lease %s/%s: %w", OperatorNamespace, LeaseName, err)
	}
	lw := &LeaseWatch{stop: stop, done: make(chan struct{})}
	go func() {
		defer close(lw.done)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok && ctx.Err() != nil { // stopped
					return
				}
				switch lease, isLease := ev.Object.(*coordinationv1.Lease); {
				case !ok:
					lw.err = fmt.Errorf("the watch of Lease %s/%s ended early", OperatorNamespace, LeaseName)
				case (ev.Type == watch.Added || ev.Type == watch.Modified) && isLease:
					lw.states = append(lw.states, *lease.Spec.DeepCopy())
				default:
					lw.err = fmt.Errorf("the watch of Lease %s/%s: %s %v", OperatorNamespace, LeaseName, ev.Type, ev.Object)
				}
				if !ok || lw.err != nil {
					return
				}
			}
		}
	}()
	return lw, nil
}

// Stop ends the watch and returns the states it saw, or why it could not
// see them all.
func (lw *LeaseWatch) Stop() ([]coordinationv1.LeaseSpec, error) {
	lw.stop()
	<-lw.done
	return lw.states, lw.err
}

// Handover is what the states of a Lease show of it changing hands.
type Handover struct {
	// Released says that the old holder gave the Lease up (a state with
	// no holder: client-go's release on a stop) before another took it.
	Released bool
	// From is when the old holder last wrote the Lease: the release's
	// renewTime if it released it, else its last renewal's.
	From time.Time
	// NewHolder took the Lease at Acquired, its acquireTime.
	NewHolder string
	Acquired  time.Time
}

// LeaseHandover reads, from the states of a Lease in order (a
// LeaseWatch's), how it passed from oldHolder to another holder. Both
// times are the replicas' own clocks, as they wrote them in the Lease.
func LeaseHandover(states []coordinationv1.LeaseSpec, oldHolder string) (Handover, error) {
	var h Handover
	for _, s := range states {
		holder := ""
		if s.HolderIdentity != nil {
			holder = *s.HolderIdentity
		}
		switch holder {
		case oldHolder:
			if h.Released {
				return h, fmt.Errorf("%s held the Lease again after releasing it", oldHolder)
			}
			if s.RenewTime != nil {
				h.From = s.RenewTime.Time
			}
		case "":
			h.Released = true
			if s.RenewTime != nil {
				h.From = s.RenewTime.Time
			}
		default:
			if s.AcquireTime == nil {
				return h, fmt.Errorf("%s holds the Lease with no acquireTime", holder)
			}
			h.NewHolder, h.Acquired = holder, s.AcquireTime.Time
			if h.From.IsZero() {
				return h, fmt.Errorf("no state of the Lease before %s took it has a renewTime of %s", holder, oldHolder)
			}
			return h, nil
		}
	}
	return h, fmt.Errorf("no replica took the Lease over from %s in %d states", oldHolder, len(states))
}
