package http

import (
	"sync/atomic"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// lifecycle states, in the only order they can be entered.
const (
	stateStarting int32 = iota
	stateServing
	stateQuiescing
	stateDraining
	stateStopped
)

// Readiness is the process lifecycle as the REST API sees it: starting, then
// serving, then quiescing (shutdown began: /ready answers 503 so load
// balancers take the instance out, while application requests are still
// served), then draining (application requests are refused while in-flight
// ones finish), then stopped. Transitions only move forwards, so a late or
// repeated call is harmless. /ready and the acceptance guard read it;
// bootstrap moves it. The zero value is starting.
type Readiness struct {
	state atomic.Int32
	// acceptFailing is set while the REST listener cannot accept
	// connections (GuardedListener): /ready answers 503 meanwhile.
	acceptFailing atomic.Bool
}

// setAcceptFailing records whether the listener is failing to accept.
func (r *Readiness) setAcceptFailing(failing bool) { r.acceptFailing.Store(failing) }

// SetListenerFailed marks the REST listener as dead for good (its serve loop
// ended while serving): /ready answers 503 from now on.
func (r *Readiness) SetListenerFailed() { r.acceptFailing.Store(true) }

// NewReadiness returns a Readiness in the starting state.
func NewReadiness() *Readiness { return &Readiness{} }

// SetServing marks startup complete: application traffic is accepted.
func (r *Readiness) SetServing() { r.advance(stateServing) }

// BeginShutdown marks the start of shutdown: /ready answers 503 from now on,
// while application requests are still served (the readiness grace that
// lets load balancers observe the instance leaving).
func (r *Readiness) BeginShutdown() { r.advance(stateQuiescing) }

// BeginDraining marks the end of the readiness grace: new application
// requests are refused while in-flight ones finish. It implies BeginShutdown.
func (r *Readiness) BeginDraining() { r.advance(stateDraining) }

// SetStopped marks the end of shutdown.
func (r *Readiness) SetStopped() { r.advance(stateStopped) }

// Ready reports whether /ready answers 200: startup is complete and shutdown
// has not begun.
func (r *Readiness) Ready() bool {
	return r.state.Load() == stateServing && !r.acceptFailing.Load()
}

// Accepting reports whether application traffic is accepted: while serving
// and during the readiness grace of shutdown.
func (r *Readiness) Accepting() bool {
	s := r.state.Load()
	return s == stateServing || s == stateQuiescing
}

// ensureReady returns nil while serving and an unavailable error naming the
// state otherwise; /ready answers with it.
func (r *Readiness) ensureReady() error {
	if s := r.state.Load(); s != stateServing {
		return notAccepting(s)
	}
	if r.acceptFailing.Load() {
		return domain.Errorf(domain.KindUnavailable, "the REST listener cannot accept connections (descriptor limit?)")
	}
	return nil
}

// ensureAccepting returns nil while application traffic is accepted and an
// unavailable error naming the state otherwise.
func (r *Readiness) ensureAccepting() error {
	if s := r.state.Load(); s != stateServing && s != stateQuiescing {
		return notAccepting(s)
	}
	return nil
}

func notAccepting(state int32) error {
	if state == stateStarting {
		return domain.Errorf(domain.KindUnavailable, "gateway is starting")
	}
	return domain.Errorf(domain.KindUnavailable, "gateway is shutting down")
}

func (r *Readiness) advance(to int32) {
	for {
		cur := r.state.Load()
		if cur >= to || r.state.CompareAndSwap(cur, to) {
			return
		}
	}
}
