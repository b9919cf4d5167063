package store

// LandInProgress is LandProgress.State while a land is in flight.
const LandInProgress = "in_progress"

// Active reports whether an invocation is starting or running.
func (r *InvocationRecord) Active() bool {
	return r != nil && (r.Status == StatusStarting || r.Status == StatusRunning)
}

// Queued reports whether an invocation waits in the queue (a discarded one
// has left it).
func (r *InvocationRecord) Queued() bool {
	return r != nil && r.Status == StatusQueued && Deref(r.LandingStatus) == ""
}

// Pending reports whether an invocation waits to be landed or discarded:
// ended, landing pending, no land in flight.
func (r *InvocationRecord) Pending() bool {
	return r != nil && !r.Active() && r.Status != StatusQueued &&
		Deref(r.LandingStatus) == LandingPending && (r.Land == nil || r.Land.State != LandInProgress)
}
