// The C half of package collectives: thin MPI wrappers whose only job is to
// keep each batch of MPI calls inside one cgo call and to return MPI's error
// codes. Datatypes are passed as small integers (see shim_dtype).
#ifndef MPIGNN_SHIM_H
#define MPIGNN_SHIM_H
#include <mpi.h>
#include <stdint.h>

enum { SHIM_BYTE = 0, SHIM_INT32 = 1, SHIM_INT64 = 2, SHIM_FLOAT32 = 3, SHIM_FLOAT64 = 4, SHIM_UINT64 = 5 };
enum { SHIM_SUM = 0, SHIM_MAX = 1, SHIM_MIN = 2 };

int shim_initialized(void);
int shim_barrier(void);
int shim_bcast(void *buf, int count, int dtype, int root);
int shim_allreduce(void *buf, int count, int dtype, int op);
int shim_allgather(const void *send, int count, void *recv, int dtype);
int shim_allgatherv(const void *send, int count, void *recv, const int *counts, const int *displs, int dtype);
int shim_alltoall(const void *send, int count, void *recv, int dtype);
int shim_alltoallv(const void *send, const int *scounts, const int *sdispls, void *recv,
                   const int *rcounts, const int *rdispls, int dtype);
// Point-to-point all-to-all for messages whose counts or displacements do not
// fit in an int: every per-peer message is cut into pieces of at most
// max_count elements. Counts and displacements are in elements; rank and
// size are the caller's (the Go Comm knows them).
int shim_alltoallv_p2p(const void *send, const int64_t *scounts, const int64_t *sdispls, void *recv,
                       const int64_t *rcounts, const int64_t *rdispls, int dtype, int64_t max_count,
                       int rank, int size);

int shim_win_allocate(int64_t bytes, void **base, MPI_Win *win);
int shim_win_free(MPI_Win *win);
// Makes this rank's local stores into the window visible to other ranks.
int shim_win_sync(MPI_Win win);
// Reads rows from several targets in one passive-target epoch:
// lock_all, one MPI_Get per target, unlock_all (which completes them).
// For target i (ranks[i]), counts[i] rows are read at the byte displacements
// tdisp[off_i .. off_i+counts[i]) of its window, and land at the byte
// displacements odisp[...] of dst, where off_i is the sum of earlier counts.
// Both sides are hindexed_block datatypes of row_bytes-byte rows.
int shim_get_rows(MPI_Win win, int ntargets, const int *ranks, const int *counts,
                  const MPI_Aint *tdisp, const MPI_Aint *odisp, int row_bytes, void *dst);
// Adds rows of src to rows of several targets in one passive-target epoch,
// like shim_get_rows with MPI_Accumulate(MPI_SUM) over rows of row_bytes/4
// MPI_FLOATs; the data moves from src's odisp to the targets' tdisp.
int shim_acc_rows(MPI_Win win, int ntargets, const int *ranks, const int *counts,
                  const MPI_Aint *tdisp, const MPI_Aint *odisp, int row_bytes, const void *src);
// After every rank's accumulates have returned: a barrier, then a window
// sync so this rank's loads see what others added to its part.
int shim_win_settle(MPI_Win win);

// The watchdog's gate (see watch.go). Its traffic travels on a duplicate of
// the world communicator, so it can never match the program's messages.
enum { SHIM_TAG_PROBE = 1, SHIM_TAG_ANSWER = 2 };
int shim_comm_dup(MPI_Comm *out);
// *n is the number of ranks of the world on this rank's node (those that
// can share memory: MPI_COMM_TYPE_SHARED). Collective.
int shim_local_size(int *n);
int shim_ibarrier(MPI_Comm comm, MPI_Request *req);

// Shared partitions (see shared.go).
// *leader is the world rank of the lowest rank on this rank's node (the
// ranks of MPI_COMM_TYPE_SHARED). Collective.
int shim_node_leader(int *leader);
// Splits the world into communicators by color (ranks in world order).
// Collective.
int shim_comm_split(int color, MPI_Comm *out);
int shim_comm_free(MPI_Comm *comm);
// Allocates a shared-memory window on comm (every rank on one node) where
// this rank contributes bytes. Collective on comm.
int shim_win_allocate_shared(MPI_Comm comm, int64_t bytes, MPI_Win *win);
// *base is the address, in this process, of the segment of rank (of the
// window's communicator) in a shared-memory window.
int shim_win_shared_query(MPI_Win win, int rank, void **base);
// Creates a window on the world over bytes of existing memory at base.
// Collective.
int shim_win_create(void *base, int64_t bytes, MPI_Win *win);
// *done says whether the n requests are complete (MPI_Testall).
int shim_testall(int n, MPI_Request *reqs, int *done);
// Answers one pending probe, if any, with this rank's gate number seq, and
// sets *prober to the probing rank (-1 if there was none).
int shim_answer_probe(MPI_Comm comm, int64_t seq, int *prober);
// Sends a probe carrying seq to every other rank.
int shim_stall_probe(MPI_Comm comm, int64_t seq, int rank, int size);
// Receives one pending probe or answer, if any: *got, its *tag, *source and
// the gate number *seq it carries.
int shim_note_poll(MPI_Comm comm, int *got, int *tag, int *source, int64_t *seq);
// Sleeps ns nanoseconds (the pause of a polling wait; see watch.go).
void shim_pause(int64_t ns);
// Gives the core to another runnable thread, if any (sched_yield).
void shim_yield(void);
#endif
