package engine

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// workClock is the clock of the load's work: the CPU time of the thread
// its goroutine is locked to (from this call until release), which other
// goroutines and processes on the machine do not advance, so a loaded
// machine (tests in parallel, a busy CI runner) makes no evaluation look
// stalled. It reads the thread's clock from any goroutine: the guard's too.
func workClock() (now func() int64, release func()) {
	runtime.LockOSThread()
	// A thread's CPU clock by its id: CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD
	// (clock_getcpuclockid(3), as glibc makes it).
	id := int32(^uint32(unix.Gettid())<<3 | 6)
	var ts unix.Timespec
	if unix.ClockGettime(id, &ts) != nil {
		runtime.UnlockOSThread()
		return wallClock, func() {}
	}
	return func() int64 {
		var ts unix.Timespec
		if unix.ClockGettime(id, &ts) != nil {
			return wallClock()
		}
		return ts.Nano()
	}, runtime.UnlockOSThread
}
