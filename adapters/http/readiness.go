package http

import (
	"sync/atomic"

	"github.com/fluss-gateway/fluss-gateway-go/domain"
)

// lifecycle states, in the only order they can be entered.
const (
	stateStarting int32 = iota
	stateServing
	stateDraining
	stateStopped
)

// Readiness is the process lifecycle as the REST API sees it: starting, then
// serving, then draining, then stopped. Transitions only move forwards, so a
// late or repeated call is harmless. /ready and the acceptance guard read it;
// bootstrap moves it. The zero value is starting.
type Readiness struct {
	state atomic.Int32
}

// NewReadiness returns a Readiness in the starting state.
func NewReadiness() *Readiness { return &Readiness{} }

// SetServing marks startup complete: application traffic is accepted.
func (r *Readiness) SetServing() { r.advance(stateServing) }

// BeginDraining marks the start of shutdown: new application requests are
// refused while in-flight ones finish.
func (r *Readiness) BeginDraining() { r.advance(stateDraining) }

// SetStopped marks the end of shutdown.
func (r *Readiness) SetStopped() { r.advance(stateStopped) }

// Accepting reports whether application traffic is accepted.
func (r *Readiness) Accepting() bool { return r.state.Load() == stateServing }

// ensureAccepting returns nil while serving and an unavailable error naming
// the state otherwise.
func (r *Readiness) ensureAccepting() error {
	switch r.state.Load() {
	case stateServing:
		return nil
	case stateStarting:
		return domain.Errorf(domain.KindUnavailable, "gateway is starting")
	default:
		return domain.Errorf(domain.KindUnavailable, "gateway is shutting down")
	}
}

func (r *Readiness) advance(to int32) {
	for {
		cur := r.state.Load()
		if cur >= to || r.state.CompareAndSwap(cur, to) {
			return
		}
	}
}
