package core

import "sync"

// EachParallel runs f(0) … f(n-1), forecastWorkers at a time: each is a
// few short git processes, which overlap well even on two cores.
func EachParallel(n int, f func(int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, forecastWorkers)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}(i)
	}
	wg.Wait()
}

// forecastWorkers is how many git processes EachParallel runs at once
// (the forecast, gc).
const forecastWorkers = 4
