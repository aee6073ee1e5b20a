//go:build !unix

package worker

import "time"

// processCPU is unknown here: benchmarks report 0 CPU.
func processCPU() time.Duration { return 0 }
