package worker

import "github.com/laraworker/laraworker/internal/procmem"

// rssMB is the process's resident set size in MB, 0 if unknown.
func rssMB() float64 { return float64(procmem.RSS()) / (1 << 20) }
