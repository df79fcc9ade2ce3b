//go:build !linux

package pg

import "time"

// processCPU and serverCPU read Linux's accounting; elsewhere the
// benchmark reports no CPU figures (zero).
func processCPU() time.Duration { return 0 }

func serverCPU(*DB) time.Duration { return 0 }
