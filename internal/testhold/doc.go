// Package testhold lets a test stop a process at a named point of its work,
// so that a signal, a kill or a stall injected by the test lands at a moment
// that is certain rather than "probably still busy". Tests that hope a
// process is still writing when their signal arrives pass on a slow machine
// and fail on a fast one; a hold makes the moment independent of speed.
//
// A process holds only when its environment asks for it:
//
//	MPIGNN_TEST_HOLD=SPEC[,SPEC...]   SPEC = POINT or POINT@RANK
//	MPIGNN_TEST_HOLD_DIR=DIR          where holds are announced and released
//
// When the code reaches At(POINT) on a rank that a SPEC names (every rank
// when the SPEC has no @RANK; the rank is read from the MPI launcher's
// environment, 0 outside MPI), it writes DIR/POINT@RANK containing its PID
// (atomically: temp name + rename), prints one line on stderr, and waits
// until DIR/POINT@RANK.go exists. It then removes both files and goes on, so
// the same point may be held again later. Signals keep their handlers while
// a process holds: a SIGTERM still runs the command's clean-up.
//
// Points are named by the code that reaches them, e.g. "temp:pred.csv" (a
// temporary of output pred.csv exists), "train-epoch:2" (epoch 2's metrics
// and checkpoint are written), "train-step:7" (the optimizer update of the
// 7th training step, counted from 1 across epochs, is done; before any
// checkpoint or stop that step may lead to). Without MPIGNN_TEST_HOLD, At returns at once
// and costs one environment lookup.
//
// The package holds no state and does not use MPI.
package testhold
