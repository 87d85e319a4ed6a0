package collectives

// #include "shim.h"
import "C"

import (
	"errors"
	"runtime"
	"time"

	"mpignn/internal/watchdog"
	"mpignn/spmd"
)

// A stalled rank (stopped, swapped out, dead without its launcher
// noticing) would hang every other rank in its next collective forever.
// With Watch, every collective of a Comm first waits at a gate (but see
// chained): an MPI_Ibarrier on a duplicate communicator, completed by
// polling MPI_Test on the MPI goroutine, yielding and then sleeping between
// polls (watchdog.Pause; where ranks and their threads outnumber the cores,
// it sleeps after a few microseconds instead of spinning and yielding). The
// data then moves with the same blocking call as without a watch, so every
// result stays bit-identical; the gate only adds one barrier's latency.
//
// A gate that is not complete after the timeout means some rank has not
// arrived. The rank that timed out is still free to call MPI (it was
// polling, not blocked), so it asks: it sends a probe to every rank and
// listens for Grace. Ranks waiting at a gate answer from their polling loop;
// a rank that does not answer was "not heard from". Of the ranks that timed
// out, the lowest returns the *watchdog.Stall, which spmd.Run prints as the
// job's one line before MPI_Abort; the others wait for that abort. After a
// stall every call of the Comm returns the same error at once, so the code
// unwinding to spmd.Run (closing stores, removing temporaries) cannot wait
// again.
//
// One-sided reads wait for no rank's cooperation with OpenMPI, but MPICH's
// MPI_Win_unlock_all waits for the target's progress: with MPICH, the RMA
// transport's DistArray.Fetch (collective by contract) passes a gate first,
// so that a stopped target times out and is named like a collective's.
//
// The remaining calls that block inside MPI (the collective after its gate,
// accumulates, MPI_Finalize) are watched by a monitor goroutine: one that outlives the
// timeout is reported from the monitor's thread, which then calls MPI_Abort
// while the MPI goroutine is blocked. That call from a second thread is
// outside what MPI_THREAD_SERIALIZED promises, but both OpenMPI and MPICH
// end the job from it, and it is the last resort of a job that would
// otherwise hang.

// watch is the watchdog state of a Comm.
type watch struct {
	wd  *watchdog.Watchdog
	hb  C.MPI_Comm // the duplicate communicator of gates and probes
	seq int64      // gates passed: the same on every rank that is in step
	// probedBy marks the ranks whose probe this rank answered: they
	// timed out before this rank did.
	probedBy []bool
	stalled  error // set once a gate timed out; every later call returns it
	stop     func()
	// localRanks is the number of ranks on this rank's node, which share
	// its cores (see watchdog.Spare).
	localRanks int
}

// Watch makes every collective of c give up after waiting timeout for the
// other ranks, and end the job with one line naming the operation, the
// phase (see Phase) and the ranks not heard from (see the comment above).
// It also guards w's MPI_Finalize with a last gate. timeout 0 leaves c as it
// was. It is collective and must be called once, before any other
// collective of c.
func (c *Comm) Watch(w *spmd.World, timeout time.Duration) error {
	if timeout < 0 {
		return errors.New("watch: negative timeout")
	}
	if timeout == 0 || c.watch != nil {
		return nil
	}
	wt := &watch{wd: watchdog.New(timeout), probedBy: make([]bool, c.size)}
	if err := mpiErr("MPI_Comm_dup", C.shim_comm_dup(&wt.hb)); err != nil {
		return err
	}
	var local C.int
	if err := mpiErr("MPI_Comm_split_type", C.shim_local_size(&local)); err != nil {
		return err
	}
	wt.localRanks = int(local)
	c.watch = wt
	wt.stop = wt.wd.Monitor(c.rank, func(s *watchdog.Stall) { w.Fatal(s) })
	w.AtFinalize(func() error {
		defer c.watch.wd.Phase("finalize")()
		err := c.Barrier()
		wt.stop()
		return err
	})
	return nil
}

// Phase labels what the callers are doing, for the message of a stall
// ("sample", "allreduce", "checkpoint"); labels nest ("epoch 2/allreduce").
// It returns a function that restores the previous label. Without Watch it
// does nothing. It is not collective.
func (c *Comm) Phase(name string) (restore func()) {
	if c.watch == nil {
		return func() {}
	}
	return c.watch.wd.Phase(name)
}

// Untimed is Phase for a span whose waits are long by design, such as the
// other ranks waiting while rank 0 partitions a dataset: no wait times out
// until restore is called. Without Watch it does nothing.
func (c *Comm) Untimed(name string) (restore func()) {
	if c.watch == nil {
		return func() {}
	}
	return c.watch.wd.Untimed(name)
}

// Whether an MPI call waits at the gate first (the gate argument of call and
// enter). The first collective of an operation is gated. A collective that
// every rank enters right after another collective of the same operation,
// with only local work between them (the data of an Alltoallv after its
// counts, the next piece of a message split at MPI's count limit), is
// chained: the previous gate found every rank there a moment ago, so a
// second gate would only add a synchronisation round (and, where ranks
// share cores, a wake-up of every sleeping waiter). Every rank runs the
// same code, so all of them skip the same gates. A rank that stops exactly
// between the two leaves the others blocked inside MPI, where the monitor
// still ends the job (without naming the rank). One-sided calls are not
// gated either: they wait for no other rank.
const (
	gated   = true
	chained = false
)

// enter is called before an MPI call of c named op: with gate it waits at
// the gate first. It returns the stall error once the job is stalling.
// Every enter that returns nil is followed by leave.
func (c *Comm) enter(op string, gate bool) error {
	wt := c.watch
	if wt == nil {
		return nil
	}
	if wt.stalled != nil {
		return wt.stalled
	}
	if gate {
		if err := c.gate(op); err != nil {
			return err
		}
	}
	wt.wd.Begin(op, false, time.Now())
	return nil
}

// leave ends what enter began.
func (c *Comm) leave() {
	if c.watch != nil {
		c.watch.wd.End()
	}
}

// call runs f, one MPI call named op, between enter and leave, and turns
// its return code into an error naming op. gate says whether it waits at
// the gate first (gated or chained for a collective, false for a call of
// this rank alone).
func (c *Comm) call(op string, gate bool, f func() C.int) error {
	if err := c.enter(op, gate); err != nil {
		return err
	}
	rc := f()
	c.leave()
	return mpiErr(op, rc)
}

// gate waits until every rank has reached the gate of its next collective
// op (see the comment above).
func (c *Comm) gate(op string) error {
	wt := c.watch
	wt.seq++
	var req C.MPI_Request
	if err := mpiErr("MPI_Ibarrier", C.shim_ibarrier(wt.hb, &req)); err != nil {
		return err
	}
	return c.poll(op, true, func(done *C.int) C.int { return C.shim_testall(1, &req, done) })
}

// poll waits until test reports done, answering the probes of ranks that
// timed out, and times out itself after the limit (see stall). test is one
// MPI_Test of what op waits for. atGate says the wait is a gate, at which
// every rank in step has passed the same number of gates.
func (c *Comm) poll(op string, atGate bool, test func(done *C.int) C.int) error {
	wt := c.watch
	start := time.Now()
	// Read per wait: the thread count may change between waits (bench
	// threads sets it per run).
	spare := watchdog.Spare(wt.localRanks, runtime.GOMAXPROCS(0), runtime.NumCPU())
	wt.wd.Begin(op, true, start)
	defer wt.wd.End()
	for {
		var done, prober C.int
		if err := mpiErr(op, test(&done)); err != nil {
			return err
		}
		if done != 0 {
			return nil
		}
		if err := mpiErr("MPI_Iprobe(stall probe)", C.shim_answer_probe(wt.hb, C.int64_t(wt.seq), &prober)); err != nil {
			return err
		}
		if prober >= 0 {
			wt.probedBy[prober] = true
		}
		waited := time.Since(start)
		if lim := wt.wd.Limit(); lim > 0 && waited > lim {
			return c.stall(op, atGate, waited)
		}
		switch sleep, yield := watchdog.Pause(waited, spare); {
		case yield:
			C.shim_yield()
		case sleep > 0:
			C.shim_pause(C.int64_t(sleep))
		}
	}
}

// stall runs after this rank's wait timed out: it probes the other ranks,
// listens for Grace, and returns the Stall; a rank that leaves the report to
// a lower one first waits Fallback for that rank's abort. Ranks that answer
// with another gate number than this rank's wait elsewhere (atGate: this
// rank waits at a gate; a one-sided read has no gate number of its own).
func (c *Comm) stall(op string, atGate bool, waited time.Duration) error {
	wt := c.watch
	answers := make([]watchdog.Answer, c.size)
	for r, p := range wt.probedBy {
		if p {
			answers[r] = watchdog.TimedOut
		}
	}
	var elsewhere []int
	err := mpiErr("probe", C.shim_stall_probe(wt.hb, C.int64_t(wt.seq), C.int(c.rank), C.int(c.size)))
	for end := time.Now().Add(watchdog.Grace); err == nil && time.Now().Before(end); {
		var got, tag, src C.int
		var seq C.int64_t
		if err = mpiErr("answer", C.shim_note_poll(wt.hb, &got, &tag, &src, &seq)); err != nil || got == 0 {
			C.shim_pause(C.int64_t(time.Millisecond))
			continue
		}
		r := int(src)
		switch {
		case tag == C.SHIM_TAG_PROBE:
			answers[r] = watchdog.TimedOut
		case answers[r] == watchdog.Silent:
			answers[r] = watchdog.Waiting
		}
		if atGate && int64(seq) != wt.seq {
			elsewhere = append(elsewhere, r)
		}
	}
	st := &watchdog.Stall{Rank: c.rank, Op: op, Phase: wt.wd.PhaseName(), Waited: waited, Timeout: wt.wd.Timeout()}
	if err != nil {
		// The probe itself failed: report what is known.
		wt.stalled = st
		return st
	}
	var report bool
	st.Known = true
	st.Silent, report = watchdog.Decide(c.rank, answers)
	st.Elsewhere = elsewhere
	wt.stalled = st
	if !report {
		C.shim_pause(C.int64_t(watchdog.Fallback))
	}
	return st
}
