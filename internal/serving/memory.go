package serving

// The Go runtime's tuning of the process that serves the webhooks and
// reconciles: the controller command (cmd/cuetrainer) sets both. They are
// here, beside what else its servers need, rather than in the command's
// package main, because test/bench runs the same servers in its own process
// and must run them with the same numbers: it cannot import package main,
// and a copy of them there would drift.

// MemoryLimit is the soft memory limit the controller command gives the Go
// runtime in a container whose memory limit is container bytes: nine tenths
// of it, so that the collector works harder as the heap nears it rather
// than the kernel killing the process.
func MemoryLimit(container int64) int64 { return container / 10 * 9 }

// GCPercent is the collector's target (GOGC) the controller command sets
// when a soft memory limit bounds its heap ($CUETRAINER_MEMORY_LIMIT, which
// deploy/ passes, or GOMEMLIMIT) and GOGC is unset. An evaluation allocates
// much and keeps little: at the default of 100 the collector took a sixth
// of the process's CPU under a burst; at 200 it runs half as often, and the
// limit keeps the larger heap within the container's memory. test/bench
// runs the controller and the webhooks with both, as deploy/ does.
const GCPercent = 200
