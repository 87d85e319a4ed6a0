package train

import (
	"time"

	"mpignn/sample"
)

// Prefetching.
//
// A step is fetch (the BatchSource call: sampling and feature gathering,
// with collectives and one-sided reads, so it must stay on the goroutine
// that owns MPI), compute (forward and backward: pure, may run anywhere)
// and finish (the Allreduce and the optimizer step, on the MPI goroutine).
// With Prefetch = N > 0 the pipeline runs step s's compute on a helper
// goroutine while the MPI goroutine fetches the batches up to s+N, then
// waits for the compute and finishes the step.
//
// Results are bit-identical to N = 0: a batch depends only on (seed,
// epoch, step), never on the weights, so fetching it early changes
// nothing, and compute and finish run in the same order on the same data.
// The exception is learnable sparse inputs (Trainer.Sparse): the next
// batch gathers embedding rows that this step's update changes, so such
// runs do not prefetch.
//
// Every rank makes the same collective calls in the same order because
// the schedule depends only on (s, N, steps), never on timing: at step s
// exactly the batches s+1..min(s+N, steps-1) not yet fetched are fetched,
// each before the step's Allreduce. A batch's rank-local error travels
// with its slot and is agreed in its own step's Allreduce, as without
// prefetch. Prefetching stops at the epoch's last step (MaxSteps
// included): the next epoch, and evaluation, start from an empty pipeline.

// pipeline runs the steps of one epoch.
type pipeline struct {
	t      *Trainer
	epoch  int
	steps  int
	ahead  int // batches fetched ahead of the computing step (0 = none)
	times  *PhaseTimes
	slots  []*sample.Batch
	errs   []error // the fetch error of each slot's batch
	next   int     // the next step to fetch
	result chan computed
}

// newPipeline prepares the steps of epoch (steps of them) with the
// trainer's prefetch depth.
func (t *Trainer) newPipeline(epoch, steps int, times *PhaseTimes) *pipeline {
	ahead := t.opts.Prefetch
	if t.Sparse != nil || steps < 2 {
		ahead = 0
	}
	p := &pipeline{t: t, epoch: epoch, steps: steps, ahead: ahead, times: times}
	if len(t.ahead) < ahead {
		t.ahead = append(t.ahead, make([]sample.Batch, ahead-len(t.ahead))...)
	}
	p.slots = make([]*sample.Batch, ahead+1)
	p.slots[0] = &t.batch
	for i := 1; i <= ahead; i++ {
		p.slots[i] = &t.ahead[i-1]
	}
	p.errs = make([]error, ahead+1)
	if ahead > 0 {
		p.result = make(chan computed, 1)
	}
	return p
}

// fetchUpTo fetches the batches of steps [p.next, limit) into their slots.
func (p *pipeline) fetchUpTo(limit int) {
	for ; p.next < min(limit, p.steps); p.next++ {
		i := p.next % len(p.slots)
		p.errs[i] = p.t.fetch(p.epoch, p.next, p.slots[i], p.times)
	}
}

// step runs step s (steps are run in order 0, 1, ...) and returns the
// global mean loss of its batch.
func (p *pipeline) step(s int, sums []float64) (float64, error) {
	t := p.t
	p.fetchUpTo(s + 1) // batch s itself, unless fetched ahead
	i := s % len(p.slots)
	b, fetchErr := p.slots[i], p.errs[i]
	var c computed
	if p.ahead == 0 {
		c = t.compute(p.epoch, s, p.steps, b, fetchErr)
	} else {
		go func() { p.result <- t.compute(p.epoch, s, p.steps, b, fetchErr) }()
		p.fetchUpTo(s + 1 + p.ahead)
		start := time.Now()
		c = <-p.result
		p.times[PhaseWait] += time.Since(start)
	}
	return t.finish(p.epoch, s, p.steps, b, &c, p.times, sums)
}
