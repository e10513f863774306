// Package parallel makes many API calls at once: the benchmark and the
// end-to-end suites create hundreds of objects faster than one client
// call after another would.
package parallel

import (
	"context"
	"fmt"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// workers is how many calls run at once.
const workers = 8

// Do calls do(i) for every i from 0 to n-1, on 8 goroutines. It returns
// how many failed and the first error (what names the calls in it), or
// the context's error if it ended first.
func Do(ctx context.Context, n int, what string, do func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := do(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d %s failed, the first: %w", len(errs), n, what, errs[0])
	}
	return ctx.Err()
}

// Create creates object(0) to object(n-1), 8 at a time.
func Create(ctx context.Context, cl client.Client, n int, object func(i int) client.Object) error {
	return Do(ctx, n, "creates", func(i int) error { return cl.Create(ctx, object(i)) })
}
