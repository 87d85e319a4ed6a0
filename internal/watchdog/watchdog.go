package watchdog

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout is the --timeout of the commands: far above any wait for a
// slow but live rank seen here (seconds, with 4 ranks on 2 busy cores), far
// below the hours a stalled job would otherwise hold its allocation.
const DefaultTimeout = 5 * time.Minute

// Grace is how long a rank that timed out listens for the other ranks'
// answers before it decides who was not heard from. A live rank answers from
// its own polling loop within its next pause (Pause caps it at
// MaxSleep), so a second is ample even on a loaded machine.
const Grace = time.Second

// Fallback is how long a rank that timed out but leaves the report to a
// lower rank waits for that rank's abort before it reports itself (the lower
// rank may have stopped too): long enough for a launcher on a loaded machine
// to end the job first, short enough that the job still ends within
// timeout + 10 s.
const Fallback = 5 * time.Second

// PolledSlack is how much longer than the timeout the monitor lets a polled
// wait run before it steps in: the polling rank reports by itself after
// timeout + Grace (+ Fallback), so the monitor acts only if that failed.
const PolledSlack = Grace + Fallback + 2*time.Second

// Watchdog records which MPI operation the MPI goroutine is in and since
// when, and the phase label its callers set; a monitor goroutine reads it.
// A nil *Watchdog is valid and records nothing, so code that runs without a
// timeout pays a nil check per operation.
type Watchdog struct {
	timeout time.Duration

	// A mutex, not atomics: a Begin/End pair costs two uncontended locks
	// (tens of nanoseconds, against microseconds for the smallest
	// collective), and op, since and polled change together.
	mu     sync.Mutex
	op     string // "" between operations
	since  time.Time
	polled bool
	phase  string
	// untimed counts the open Untimed spans: while it is positive no
	// operation is overdue.
	untimed int
}

// New returns a watchdog for operations limited to timeout (> 0).
func New(timeout time.Duration) *Watchdog { return &Watchdog{timeout: timeout} }

// Timeout returns the limit of one operation; 0 for a nil watchdog.
func (w *Watchdog) Timeout() time.Duration {
	if w == nil {
		return 0
	}
	return w.timeout
}

// Begin records that the MPI goroutine entered op at now. polled says the
// MPI goroutine polls this wait itself and reports its own timeout, so the
// monitor allows PolledSlack more before it steps in.
func (w *Watchdog) Begin(op string, polled bool, now time.Time) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.op, w.since, w.polled = op, now, polled
	w.mu.Unlock()
}

// End records that the MPI goroutine left its operation.
func (w *Watchdog) End() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.op = ""
	w.mu.Unlock()
}

// Phase sets the phase label that messages name ("sample", "allreduce",
// "checkpoint") and returns a function that restores the previous one.
// Labels nest: Phase("allreduce") inside "epoch 2" reads "epoch 2/allreduce".
func (w *Watchdog) Phase(name string) (restore func()) {
	if w == nil {
		return func() {}
	}
	w.mu.Lock()
	prev := w.phase
	if prev != "" {
		w.phase = prev + "/" + name
	} else {
		w.phase = name
	}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.phase = prev
		w.mu.Unlock()
	}
}

// Untimed is Phase for a span whose waits are long by design (rank 0
// partitions a dataset while the others wait for the result): no operation
// times out until restore is called.
func (w *Watchdog) Untimed(name string) (restore func()) {
	if w == nil {
		return func() {}
	}
	restorePhase := w.Phase(name)
	w.mu.Lock()
	w.untimed++
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.untimed--
		w.mu.Unlock()
		restorePhase()
	}
}

// Limit returns how long one operation may wait now: the timeout, or 0 (no
// limit) inside an Untimed span or for a nil watchdog.
func (w *Watchdog) Limit() time.Duration {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.untimed > 0 {
		return 0
	}
	return w.timeout
}

// PhaseName returns the current phase label ("" when none is set).
func (w *Watchdog) PhaseName() string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.phase
}

// Overdue reports the operation the MPI goroutine has been in for longer
// than its limit at now: the timeout (plus extra), plus PolledSlack for a
// polled wait.
func (w *Watchdog) Overdue(now time.Time, extra time.Duration) (op, phase string, waited time.Duration, ok bool) {
	if w == nil {
		return "", "", 0, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.op == "" || w.untimed > 0 {
		return "", "", 0, false
	}
	limit := w.timeout + extra
	if w.polled {
		limit += PolledSlack
	}
	waited = now.Sub(w.since)
	return w.op, w.phase, waited, waited > limit
}

// tick is how often the monitor looks: often enough to act within a small
// fraction of the timeout, never more than every 10 ms nor less than every
// second.
func (w *Watchdog) tick() time.Duration {
	return min(max(w.timeout/20, 10*time.Millisecond), time.Second)
}

// Monitor starts a goroutine that calls expire once with the first overdue
// operation (see Overdue) and then stops. Unlike a polled wait, an operation
// that overran here holds the MPI goroutine inside MPI, so expire runs on the
// monitor's goroutine and cannot ask the other ranks anything: the Stall it
// gets has Known false. Ranks other than 0 wait Grace longer, so that when
// rank 0 is blocked too, its line is usually the only one. stop ends the
// monitor.
func (w *Watchdog) Monitor(rank int, expire func(*Stall)) (stop func()) {
	if w == nil {
		return func() {}
	}
	var extra time.Duration
	if rank > 0 {
		extra = Grace
	}
	quit := make(chan struct{})
	go func() {
		t := time.NewTicker(w.tick())
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				if op, phase, waited, late := w.Overdue(now, extra); late {
					expire(&Stall{Rank: rank, Op: op, Phase: phase, Waited: waited, Timeout: w.timeout})
					return
				}
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit) }) }
}

// Pause is the schedule of a polling wait that has waited so far. spare
// says whether the waiting rank's polling thread has a core to itself while
// the ranks it waits for compute (see Spare).
//
// With a spare core: poll again at once for the first SpinFor (as a
// blocking MPI wait does: a peer that is about to arrive costs no wake-up);
// then yield the core before each poll until YieldFor; then sleep an eighth
// of the time waited, between MinSleep and MaxSleep.
//
// Without one (ranks and their threads outnumber the cores): poll at once
// only for SpinShared, which catches peers that arrive together (a gate of
// ranks in step completes in a few microseconds); then sleep at once, an
// eighth of the time waited, between MinSleepShared and MaxSleep. Past
// SpinShared the wait is for a rank that is computing or descheduled, which
// takes at least a scheduler time slice (milliseconds), and spinning or
// yielding in a loop (a system call that returns at once when nothing else
// is runnable on this core) would take the core from that rank, or from its
// threads: MPICH's blocking calls, which spin, made such jobs 4-5x slower
// than OpenMPI's, and the gate's 1 ms spin and 4 ms of yields made MPICH
// ~20 % slower still (BENCHMARKS.md, "Stall watchdog").
//
// A sleep of at most an eighth of the wait adds at most an eighth to it.
func Pause(waited time.Duration, spare bool) (sleep time.Duration, yield bool) {
	if !spare {
		if waited < SpinShared {
			return 0, false
		}
		return min(max(waited/8, MinSleepShared), MaxSleep), false
	}
	switch {
	case waited < SpinFor:
		return 0, false
	case waited < YieldFor:
		return 0, true
	}
	return min(max(waited/8, MinSleep), MaxSleep), false
}

// The schedule of Pause.
const (
	SpinFor  = time.Millisecond
	YieldFor = 5 * time.Millisecond
	MinSleep = 250 * time.Microsecond
	MaxSleep = time.Millisecond
	// SpinShared is several times the latency of a gate whose ranks
	// arrive together (2-3 µs for 2 ranks, BENCHMARKS.md).
	SpinShared = 20 * time.Microsecond
	// MinSleepShared is Linux's default timer slack: a shorter sleep
	// lasts about as long anyway.
	MinSleepShared = 50 * time.Microsecond
)

// Spare reports whether a rank waiting in MPI has a core for its polling
// thread while the other ranks of its node compute on all their threads:
// they need (localRanks-1)·threads cores, and the waiting rank's own
// compute threads are idle. Every rank of a node computes the same answer
// when they run the same number of threads (train's --threads).
func Spare(localRanks, threads, cores int) bool {
	return (localRanks-1)*threads+1 <= cores
}

// Answer is what a rank learned about one peer after its wait timed out.
type Answer int

// Answers. Silent: nothing came from the peer within Grace (stopped, dead,
// or busy outside MPI). Waiting: the peer answered from a wait of its own.
// TimedOut: the peer timed out too and probed this rank.
const (
	Silent Answer = iota
	Waiting
	TimedOut
)

// Decide reads the answers of the peers (answers[self] is ignored) after
// rank self timed out: it returns the ranks not heard from, and whether self
// reports. Of the ranks that timed out, the lowest reports, so that the job
// prints one line however many ranks waited.
func Decide(self int, answers []Answer) (silent []int, report bool) {
	report = true
	for r, a := range answers {
		switch {
		case r == self:
		case a == Silent:
			silent = append(silent, r)
		case a == TimedOut && r < self:
			report = false
		}
	}
	return silent, report
}

// Stall is the error of a rank whose wait in an MPI operation timed out. Its
// text is the one line the job prints before it ends.
type Stall struct {
	Rank    int
	Op      string // the MPI operation, e.g. "MPI_Allreduce(sum)"
	Phase   string // the callers' phase label; "" when none was set
	Waited  time.Duration
	Timeout time.Duration
	// Known says whether the peers were asked; Silent lists the ranks
	// that did not answer, Elsewhere those that answered from another
	// operation (the ranks disagree on the order of collectives).
	Known     bool
	Silent    []int
	Elsewhere []int
}

func (s *Stall) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stalled: rank %d waited %s in %s", s.Rank, s.Waited.Round(100*time.Millisecond), s.Op)
	if s.Phase != "" {
		fmt.Fprintf(&b, " (phase %s)", s.Phase)
	}
	switch {
	case !s.Known:
		b.WriteString("; blocked inside MPI, so it cannot tell which ranks are missing")
	case len(s.Silent) > 0:
		fmt.Fprintf(&b, "; not heard from: %s (stopped, dead, or busy outside MPI)", Ranks(s.Silent))
	case len(s.Elsewhere) == 0:
		b.WriteString("; every rank answered but the operation did not complete")
	}
	if s.Known && len(s.Elsewhere) > 0 {
		fmt.Fprintf(&b, "; waiting in a different collective: %s", Ranks(s.Elsewhere))
	}
	fmt.Fprintf(&b, "; ending the job (--timeout %s)", s.Timeout)
	return b.String()
}

// Ranks renders a rank list: "rank 3", "ranks 1, 2".
func Ranks(rs []int) string {
	if len(rs) == 1 {
		return fmt.Sprintf("rank %d", rs[0])
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	return "ranks " + strings.Join(s, ", ")
}
