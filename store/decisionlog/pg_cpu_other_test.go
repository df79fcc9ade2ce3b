//go:build !linux

package decisionlog

import (
	"time"

	"github.com/toolgate/toolgate/store/pg"
)

// processCPU and serverCPU read Linux's accounting; elsewhere the
// benchmark reports no CPU figures (zero).
func processCPU() time.Duration { return 0 }

func serverCPU(*pg.DB) time.Duration { return 0 }
