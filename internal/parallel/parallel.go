// Package parallel runs independent per-rank work on a bounded number of goroutines.
package parallel

import (
	"runtime"
	"sync"
)

// For calls fn(i) for every i in [0, n) on at most workers goroutines (0 means
// GOMAXPROCS) and returns when all calls have returned.
func For(n, workers int, fn func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
