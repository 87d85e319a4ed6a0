package spmd

// #include <mpi.h>
// #include <signal.h>
// #include <stdlib.h>
//
// // spmd_signals_onstack adds SA_ONSTACK to every signal handler that lacks
// // it. MPICH's MPI_Init installs a SIGUSR1 handler of its own (a counter
// // for its fault tolerance, chaining to the handler it replaced: Go's)
// // without SA_ONSTACK, so a SIGUSR1 that lands on a Go thread runs Go's
// // handler on the goroutine's stack and the runtime aborts ("non-Go code
// // set up signal handler without SA_ONSTACK flag"): a preemption signal
// // killed a rank at random. Go asks exactly this of C code that installs
// // handlers; threads without an alternate stack are unaffected.
// static void spmd_signals_onstack(void) {
//     for (int sig = 1; sig < NSIG; sig++) {
//         struct sigaction sa;
//         if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) != 0) continue;
//         if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN || (sa.sa_flags & SA_ONSTACK)) continue;
//         sa.sa_flags |= SA_ONSTACK;
//         sigaction(sig, &sa, NULL);
//     }
// }
//
// // Init MPI at the requested thread level and make MPI return errors on the
// // world communicator instead of aborting, so failures reach Go as errors.
// static int spmd_init(int required, int *provided, int *already) {
//     int flag = 0;
//     MPI_Initialized(&flag);
//     *already = flag;
//     int rc = MPI_SUCCESS;
//     if (!flag) {
//         rc = MPI_Init_thread(NULL, NULL, required, provided);
//         spmd_signals_onstack();
//         if (rc != MPI_SUCCESS) return rc;
//     } else {
//         MPI_Query_thread(provided);
//     }
//     return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
// }
// static int spmd_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
// static int spmd_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
// static int spmd_finalize(void) {
//     int fin = 0;
//     MPI_Finalized(&fin);
//     if (fin) return MPI_SUCCESS;
//     return MPI_Finalize();
// }
// static int spmd_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
// static int spmd_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
// static int spmd_allreduce_max_int(int *v) {
//     return MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
// }
// static void spmd_error_string(int code, char *buf, int len) {
//     int n = 0;
//     if (MPI_Error_string(code, buf, &n) != MPI_SUCCESS || n <= 0) { buf[0] = 0; return; }
//     if (n >= len) n = len - 1;
//     buf[n] = 0;
// }
// static int spmd_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }
// static int spmd_thread_multiple(void) { return MPI_THREAD_MULTIPLE; }
// static int spmd_version(char *buf, int len) {
//     int n = 0;
//     int rc = MPI_Get_library_version(buf, &n);
//     if (n >= len) n = len - 1;
//     buf[n > 0 ? n : 0] = 0;
//     return rc;
// }
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// mpiError turns an MPI return code into a Go error naming the call.
func mpiError(call string, rc C.int) error { return MPIError(call, int(rc)) }

// MPIError turns the return code of an MPI call into a Go error naming the
// call and carrying MPI's own text, or nil for MPI_SUCCESS. Package
// collectives reports the return codes of its C shim through it.
func MPIError(call string, rc int) error {
	if rc == int(C.MPI_SUCCESS) {
		return nil
	}
	var buf [C.MPI_MAX_ERROR_STRING + 1]C.char
	C.spmd_error_string(C.int(rc), &buf[0], C.int(len(buf)))
	return fmt.Errorf("%s: %s (MPI error %d)", call, C.GoString(&buf[0]), rc)
}

func mpiInit() (provided int, already bool, err error) {
	var p, a C.int
	rc := C.spmd_init(C.spmd_thread_serialized(), &p, &a)
	if err := mpiError("MPI_Init_thread", rc); err != nil {
		return 0, false, err
	}
	return int(p), a != 0, nil
}

func mpiRankSize() (rank, size int, err error) {
	var r, s C.int
	if err := mpiError("MPI_Comm_rank", C.spmd_rank(&r)); err != nil {
		return 0, 0, err
	}
	if err := mpiError("MPI_Comm_size", C.spmd_size(&s)); err != nil {
		return 0, 0, err
	}
	return int(r), int(s), nil
}

func mpiFinalize() error { return mpiError("MPI_Finalize", C.spmd_finalize()) }
func mpiAbort(code int)  { C.spmd_abort(C.int(code)) }
func mpiBarrier() error  { return mpiError("MPI_Barrier", C.spmd_barrier()) }

func mpiAllreduceMaxInt(v int) (int, error) {
	x := C.int(v)
	err := mpiError("MPI_Allreduce", C.spmd_allreduce_max_int(&x))
	return int(x), err
}

func threadSerialized() int { return int(C.spmd_thread_serialized()) }

func libraryVersion() string {
	buf := (*C.char)(C.malloc(C.MPI_MAX_LIBRARY_VERSION_STRING + 1))
	defer C.free(unsafe.Pointer(buf))
	C.spmd_version(buf, C.MPI_MAX_LIBRARY_VERSION_STRING+1)
	s := C.GoString(buf)
	if i := strings.IndexAny(s, ",\n"); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
