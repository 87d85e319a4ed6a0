package testhold

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWanted(t *testing.T) {
	for _, tc := range []struct {
		spec, point string
		rank        int
		want        bool
	}{
		{"temp:pred.csv", "temp:pred.csv", 0, true},
		{"temp:pred.csv", "temp:pred.csv", 3, true},
		{"temp:pred.csv@0", "temp:pred.csv", 0, true},
		{"temp:pred.csv@0", "temp:pred.csv", 1, false},
		{"train-epoch:2@1", "train-epoch:2", 1, true},
		{"train-epoch:2@1", "train-epoch:20", 1, false},
		{"a, train-epoch:2@1 ,b", "train-epoch:2", 1, true},
		{"a,b", "train-epoch:2", 0, false},
		{"train-epoch:2@x", "train-epoch:2", 0, false},
		{"", "x", 0, false},
	} {
		assert.Equal(t, tc.want, Wanted(tc.spec, tc.point, tc.rank), "%q %q rank %d", tc.spec, tc.point, tc.rank)
	}
}

// TestHoldAndRelease: At blocks until Go, announces its PID, cleans up its
// files, and can hold at the same point again.
func TestHoldAndRelease(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("OMPI_COMM_WORLD_RANK", "1")
	t.Setenv(EnvDir, dir)
	t.Setenv(EnvSpec, "x:1@1")
	for round := 0; round < 2; round++ {
		returned := make(chan struct{})
		go func() { At("x:1"); close(returned) }()
		pid, err := Await(dir, "x:1", 1, 10*time.Second, returned)
		require.NoError(t, err)
		assert.Equal(t, os.Getpid(), pid)
		select {
		case <-returned:
			t.Fatal("At returned before its release")
		case <-time.After(50 * time.Millisecond):
		}
		require.NoError(t, Go(dir, "x:1", 1))
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
			t.Fatal("At did not return after its release")
		}
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, ents, "round %d left files", round)
	}
	// Another point, or this one on another rank, does not hold.
	At("x:2")
	t.Setenv(EnvSpec, "x:1@0")
	At("x:1")
}

func TestAwaitGivesUp(t *testing.T) {
	dir := t.TempDir()
	_, err := Await(dir, "p", 0, 20*time.Millisecond, nil)
	assert.ErrorContains(t, err, "no hold at p on rank 0")
	done := make(chan struct{})
	close(done)
	_, err = Await(dir, "p", 0, time.Minute, done)
	assert.ErrorContains(t, err, "ended before holding at p")
	require.NoError(t, os.WriteFile(Announce(dir, "p", 0), []byte("x"), 0o644))
	_, err = Await(dir, "p", 0, time.Minute, nil)
	assert.ErrorContains(t, err, "is not a PID")
	require.NoError(t, os.WriteFile(Announce(dir, "p", 0), []byte(strconv.Itoa(42)+"\n"), 0o644))
	pid, err := Await(dir, "p", 0, time.Minute, nil)
	require.NoError(t, err)
	assert.Equal(t, 42, pid)
}

// TestNoDir: a hold without a directory is skipped, not a hang.
func TestNoDir(t *testing.T) {
	t.Setenv(EnvSpec, "p")
	t.Setenv(EnvDir, "")
	At("p")
}
