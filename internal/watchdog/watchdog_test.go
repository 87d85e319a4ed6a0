package watchdog

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestOverdue(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name   string
		polled bool
		after  time.Duration
		ended  bool
		late   bool
	}{
		{"within the timeout", false, 9 * time.Second, false, false},
		{"past the timeout", false, 11 * time.Second, false, true},
		{"ended", false, time.Hour, true, false},
		{"polled, within the slack", true, 10*time.Second + PolledSlack - time.Millisecond, false, false},
		{"polled, past the slack", true, 10*time.Second + PolledSlack + time.Millisecond, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := New(10 * time.Second)
			w.Begin("MPI_Allreduce(sum)", tt.polled, t0)
			if tt.ended {
				w.End()
			}
			op, _, waited, late := w.Overdue(t0.Add(tt.after), 0)
			assert.Equal(t, tt.late, late)
			if !tt.ended {
				assert.Equal(t, "MPI_Allreduce(sum)", op)
				assert.Equal(t, tt.after, waited)
			}
		})
	}
}

func TestOverdueExtra(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := New(10 * time.Second)
	w.Begin("MPI_Bcast", false, t0)
	_, _, _, late := w.Overdue(t0.Add(11*time.Second), Grace+time.Second)
	assert.False(t, late, "extra time extends the limit")
	_, _, _, late = w.Overdue(t0.Add(11*time.Second), 0)
	assert.True(t, late)
}

func TestPhaseNests(t *testing.T) {
	w := New(time.Second)
	assert.Equal(t, "", w.PhaseName())
	outer := w.Phase("epoch 2 train")
	inner := w.Phase("allreduce")
	assert.Equal(t, "epoch 2 train/allreduce", w.PhaseName())
	inner()
	assert.Equal(t, "epoch 2 train", w.PhaseName())
	outer()
	assert.Equal(t, "", w.PhaseName())
}

func TestUntimed(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := New(time.Second)
	assert.Equal(t, time.Second, w.Limit())
	restore := w.Untimed("partition --data on rank 0")
	w.Begin("MPI_Bcast", false, t0)
	_, _, _, late := w.Overdue(t0.Add(time.Hour), 0)
	assert.False(t, late, "an untimed span never times out")
	assert.Equal(t, time.Duration(0), w.Limit())
	assert.Equal(t, "partition --data on rank 0", w.PhaseName())
	restore()
	_, _, _, late = w.Overdue(t0.Add(time.Hour), 0)
	assert.True(t, late)
	assert.Equal(t, "", w.PhaseName())
}

func TestNilWatchdog(t *testing.T) {
	var w *Watchdog
	w.Begin("MPI_Barrier", false, time.Now())
	w.End()
	w.Phase("x")()
	w.Untimed("y")()
	_, _, _, late := w.Overdue(time.Now().Add(time.Hour), 0)
	assert.False(t, late)
	assert.Zero(t, w.Limit())
	assert.Zero(t, w.Timeout())
	w.Monitor(0, func(*Stall) { t.Error("a nil watchdog reported") })()
}

func TestMonitorReportsOnce(t *testing.T) {
	w := New(30 * time.Millisecond)
	got := make(chan *Stall, 2)
	stop := w.Monitor(3, func(s *Stall) { got <- s })
	defer stop()
	w.Begin("MPI_Get(rows)", false, time.Now())
	select {
	case s := <-got:
		assert.Equal(t, 3, s.Rank)
		assert.Equal(t, "MPI_Get(rows)", s.Op)
		assert.False(t, s.Known)
		assert.GreaterOrEqual(t, s.Waited, 30*time.Millisecond)
	case <-time.After(10 * time.Second):
		t.Fatal("the monitor did not report an operation past its timeout")
	}
	select {
	case <-got:
		t.Fatal("the monitor reported twice")
	case <-time.After(100 * time.Millisecond):
	}
}

func TestMonitorQuietBetweenOperations(t *testing.T) {
	w := New(10 * time.Millisecond)
	stop := w.Monitor(0, func(*Stall) { t.Error("reported with no operation under way") })
	w.Begin("MPI_Barrier", false, time.Now())
	w.End()
	time.Sleep(50 * time.Millisecond) // several ticks with nothing under way
	stop()
}

func TestPause(t *testing.T) {
	tests := []struct {
		waited time.Duration
		spare  bool
		sleep  time.Duration
		yield  bool
	}{
		{0, true, 0, false},
		{SpinFor - 1, true, 0, false},
		{SpinFor, true, 0, true},
		{YieldFor - 1, true, 0, true},
		{YieldFor, true, YieldFor / 8, false},
		{6 * time.Millisecond, true, 750 * time.Microsecond, false},
		{time.Hour, true, MaxSleep, false},
		// Cores shared: a short spin, then sleeps at once, never yields.
		{0, false, 0, false},
		{SpinShared - 1, false, 0, false},
		{SpinShared, false, MinSleepShared, false},
		{SpinFor, false, MinSleepShared * 5 / 2, false},
		{YieldFor - 1, false, (YieldFor - 1) / 8, false},
		{time.Hour, false, MaxSleep, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/spare=%v", tt.waited, tt.spare), func(t *testing.T) {
			sleep, yield := Pause(tt.waited, tt.spare)
			assert.Equal(t, tt.sleep, sleep)
			assert.Equal(t, tt.yield, yield)
			floor := MinSleep
			if !tt.spare {
				floor = MinSleepShared
			}
			assert.LessOrEqual(t, sleep, max(tt.waited/8, floor), "a pause adds at most an eighth of the wait")
		})
	}
}

func TestSpare(t *testing.T) {
	tests := []struct {
		name                       string
		localRanks, threads, cores int
		want                       bool
	}{
		{"one rank", 1, 16, 16, true},
		{"2 ranks x 1 thread on 2 cores", 2, 1, 2, true},
		{"2 ranks x 8 threads on 16 cores", 2, 8, 16, true},
		{"16 ranks x 1 thread on 16 cores", 16, 1, 16, true},
		{"2 ranks x 2 threads on 2 cores", 2, 2, 2, false},
		{"4 ranks on 2 cores", 4, 1, 2, false},
		{"2 ranks x 16 threads on 16 cores", 2, 16, 16, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Spare(tt.localRanks, tt.threads, tt.cores))
		})
	}
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name    string
		self    int
		answers []Answer
		silent  []int
		report  bool
	}{
		{"two ranks, peer silent", 0, []Answer{Silent, Silent}, []int{1}, true},
		{"rank 0 stopped, rank 1 reports", 1, []Answer{Silent, Silent, Waiting}, []int{0}, true},
		{"a lower rank timed out too: it reports", 2, []Answer{Waiting, TimedOut, Silent, Silent}, []int{3}, false},
		{"a higher rank timed out too: this one reports", 1, []Answer{Silent, Silent, TimedOut}, []int{0}, true},
		{"everyone answered", 0, []Answer{Silent, Waiting, Waiting}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			silent, report := Decide(tt.self, tt.answers)
			assert.Equal(t, tt.silent, silent)
			assert.Equal(t, tt.report, report)
		})
	}
}

func TestStallMessage(t *testing.T) {
	base := Stall{Rank: 1, Op: "MPI_Allreduce(sum)", Phase: "epoch 2 train/allreduce", Waited: 5040 * time.Millisecond, Timeout: 5 * time.Second}
	tests := []struct {
		name string
		edit func(s *Stall)
		want []string
	}{
		{"silent ranks", func(s *Stall) { s.Known, s.Silent = true, []int{0, 3} },
			[]string{"stalled: rank 1 waited 5s in MPI_Allreduce(sum) (phase epoch 2 train/allreduce)", "not heard from: ranks 0, 3", "--timeout 5s"}},
		{"unknown", func(s *Stall) {}, []string{"cannot tell which ranks", "ending the job"}},
		{"elsewhere", func(s *Stall) { s.Known, s.Elsewhere = true, []int{2} }, []string{"waiting in a different collective: rank 2"}},
		{"no phase", func(s *Stall) { s.Phase, s.Known, s.Silent = "", true, []int{0} }, []string{"in MPI_Allreduce(sum); not heard from: rank 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			tt.edit(&s)
			msg := s.Error()
			assert.NotContains(t, msg, "\n", "the report is one line")
			for _, w := range tt.want {
				assert.Contains(t, msg, w)
			}
			if len(s.Silent) == 0 {
				assert.False(t, strings.Contains(msg, "not heard from"))
			}
		})
	}
}
