//go:build !linux

package engine

// workClock is the clock of the load's work: where a thread's CPU clock is
// not read (not Linux), the wall clock.
func workClock() (now func() int64, release func()) { return wallClock, func() {} }
