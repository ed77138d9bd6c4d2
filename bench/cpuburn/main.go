// Command cpuburn takes a steady share of the machine's CPU and nothing
// else: n goroutines, each busy for a share of every 5 ms and asleep for the
// rest. Beside the serve-mode load test it tells what any work of that size
// costs the writers, apart from what the change feed's followers do
// (docs/performance.md, Live memory).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	share := flag.Float64("share", 0.2, "the share of a core each goroutine takes, 0 to 1")
	n := flag.Int("n", 2, "how many goroutines burn")
	flag.Parse()
	if *share <= 0 || *share > 1 || *n < 1 {
		fmt.Fprintln(os.Stderr, "cpuburn: -share takes a share of a core above 0 and at most 1, -n at least 1 goroutine")
		os.Exit(2)
	}
	const period = 5 * time.Millisecond
	busy := time.Duration(float64(period) * *share)
	for range *n {
		go func() {
			for {
				start := time.Now()
				for time.Since(start) < busy {
				}
				time.Sleep(period - busy)
			}
		}()
	}
	select {}
}
