//go:build !linux

package main

import (
	"errors"
	"time"
)

// defaultTransport is the portable one where there is no epoll.
const defaultTransport = "goroutines"

func runEvents(config, string, [][]byte, time.Time, time.Time) (result, error) {
	return result{}, errors.New("-transport events needs Linux (epoll); use -transport goroutines")
}
