#include "shim.h"
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

static MPI_Datatype shim_dtype(int d) {
    switch (d) {
    case SHIM_INT32: return MPI_INT32_T;
    case SHIM_INT64: return MPI_INT64_T;
    case SHIM_FLOAT32: return MPI_FLOAT;
    case SHIM_FLOAT64: return MPI_DOUBLE;
    case SHIM_UINT64: return MPI_UINT64_T;
    default: return MPI_BYTE;
    }
}

static MPI_Op shim_op(int o) {
    switch (o) {
    case SHIM_MAX: return MPI_MAX;
    case SHIM_MIN: return MPI_MIN;
    default: return MPI_SUM;
    }
}

int shim_initialized(void) { int f = 0; MPI_Initialized(&f); return f; }


int shim_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }

int shim_bcast(void *buf, int count, int dtype, int root) {
    return MPI_Bcast(buf, count, shim_dtype(dtype), root, MPI_COMM_WORLD);
}

int shim_allreduce(void *buf, int count, int dtype, int op) {
    return MPI_Allreduce(MPI_IN_PLACE, buf, count, shim_dtype(dtype), shim_op(op), MPI_COMM_WORLD);
}

int shim_allgather(const void *send, int count, void *recv, int dtype) {
    MPI_Datatype t = shim_dtype(dtype);
    return MPI_Allgather(send, count, t, recv, count, t, MPI_COMM_WORLD);
}

int shim_allgatherv(const void *send, int count, void *recv, const int *counts, const int *displs, int dtype) {
    MPI_Datatype t = shim_dtype(dtype);
    return MPI_Allgatherv(send, count, t, recv, counts, displs, t, MPI_COMM_WORLD);
}

int shim_alltoall(const void *send, int count, void *recv, int dtype) {
    MPI_Datatype t = shim_dtype(dtype);
    return MPI_Alltoall(send, count, t, recv, count, t, MPI_COMM_WORLD);
}

int shim_alltoallv(const void *send, const int *scounts, const int *sdispls, void *recv,
                   const int *rcounts, const int *rdispls, int dtype) {
    MPI_Datatype t = shim_dtype(dtype);
    return MPI_Alltoallv(send, scounts, sdispls, t, recv, rcounts, rdispls, t, MPI_COMM_WORLD);
}

static int64_t pieces(int64_t n, int64_t max_count) { return n == 0 ? 0 : (n + max_count - 1) / max_count; }

int shim_alltoallv_p2p(const void *send, const int64_t *scounts, const int64_t *sdispls, void *recv,
                       const int64_t *rcounts, const int64_t *rdispls, int dtype, int64_t max_count,
                       int rank, int size) {
    int rc;
    MPI_Datatype t = shim_dtype(dtype);
    int esize;
    if ((rc = MPI_Type_size(t, &esize)) != MPI_SUCCESS) return rc;
    int64_t nreq = 0;
    for (int p = 0; p < size; p++) nreq += pieces(scounts[p], max_count) + pieces(rcounts[p], max_count);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (nreq > 0 ? nreq : 1));
    if (!req) return MPI_ERR_NO_MEM;
    int64_t k = 0;
    rc = MPI_SUCCESS;
    // Tags carry the piece index so that pieces of one peer's message match
    // in order even if a transport were to reorder them.
    for (int p = 0; p < size && rc == MPI_SUCCESS; p++) {
        for (int64_t off = 0, piece = 0; off < rcounts[p] && rc == MPI_SUCCESS; off += max_count, piece++) {
            int64_t n = rcounts[p] - off < max_count ? rcounts[p] - off : max_count;
            char *at = (char *)recv + (rdispls[p] + off) * (int64_t)esize;
            rc = MPI_Irecv(at, (int)n, t, p, (int)(piece % 30000), MPI_COMM_WORLD, &req[k++]);
        }
    }
    for (int i = 1; i <= size && rc == MPI_SUCCESS; i++) {
        int p = (rank + i) % size; // stagger destinations to spread load
        for (int64_t off = 0, piece = 0; off < scounts[p] && rc == MPI_SUCCESS; off += max_count, piece++) {
            int64_t n = scounts[p] - off < max_count ? scounts[p] - off : max_count;
            const char *at = (const char *)send + (sdispls[p] + off) * (int64_t)esize;
            rc = MPI_Isend(at, (int)n, t, p, (int)(piece % 30000), MPI_COMM_WORLD, &req[k++]);
        }
    }
    if (rc == MPI_SUCCESS) {
        rc = MPI_Waitall((int)k, req, MPI_STATUSES_IGNORE);
    } else {
        for (int64_t i = 0; i < k; i++) { MPI_Cancel(&req[i]); MPI_Request_free(&req[i]); }
    }
    free(req);
    return rc;
}

int shim_win_allocate(int64_t bytes, void **base, MPI_Win *win) {
    MPI_Info info;
    int rc = MPI_Info_create(&info);
    if (rc != MPI_SUCCESS) return rc;
    // No rank relies on the order of two accumulates to one location (the
    // gradient windows only sum), so the implementation may skip the
    // ordering that MPI otherwise guarantees between them.
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Info_set(info, "same_disp_unit", "true");
    rc = MPI_Win_allocate((MPI_Aint)bytes, 1, info, MPI_COMM_WORLD, base, win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
}

int shim_win_free(MPI_Win *win) { return MPI_Win_free(win); }

int shim_win_sync(MPI_Win win) {
    // Local stores into window memory are not guaranteed to be visible to
    // other ranks' gets until the window is synchronised (MPI-3 §11.4);
    // MPICH returned stale bytes without this.
    int rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Win_sync(win);
    int rc2 = MPI_Win_unlock_all(win);
    return rc != MPI_SUCCESS ? rc : rc2;
}

// rows_epoch moves fixed-size rows between dst/src and several targets in one
// passive-target epoch: lock_all, one MPI_Get or MPI_Accumulate per target
// with hindexed_block datatypes on both sides, unlock_all (which completes
// them at origin and target). acc selects MPI_Accumulate(MPI_SUM) of
// MPI_FLOAT rows (row_bytes a multiple of 4) instead of MPI_Get of bytes.
static int rows_epoch(MPI_Win win, int acc, int ntargets, const int *ranks, const int *counts,
                      const MPI_Aint *tdisp, const MPI_Aint *odisp, int row_bytes, void *buf) {
    MPI_Datatype row;
    // An accumulate's datatypes must be built from the predefined type the
    // operation reduces, so its rows are floats, not bytes.
    int rc = acc ? MPI_Type_contiguous(row_bytes / 4, MPI_FLOAT, &row) : MPI_Type_contiguous(row_bytes, MPI_BYTE, &row);
    if (rc != MPI_SUCCESS) return rc;
    if ((rc = MPI_Type_commit(&row)) != MPI_SUCCESS) { MPI_Type_free(&row); return rc; }
    if ((rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, win)) != MPI_SUCCESS) { MPI_Type_free(&row); return rc; }
    int64_t off = 0;
    for (int i = 0; i < ntargets && rc == MPI_SUCCESS; i++) {
        int n = counts[i];
        if (n == 0) continue;
        MPI_Datatype ttype, otype;
        rc = MPI_Type_create_hindexed_block(n, 1, tdisp + off, row, &ttype);
        if (rc != MPI_SUCCESS) break;
        rc = MPI_Type_create_hindexed_block(n, 1, odisp + off, row, &otype);
        if (rc != MPI_SUCCESS) { MPI_Type_free(&ttype); break; }
        MPI_Type_commit(&ttype);
        MPI_Type_commit(&otype);
        if (acc) {
            rc = MPI_Accumulate(buf, 1, otype, ranks[i], 0, 1, ttype, MPI_SUM, win);
        } else {
            rc = MPI_Get(buf, 1, otype, ranks[i], 0, 1, ttype, win);
        }
        // Freeing a datatype in use by a pending operation is allowed: MPI
        // keeps it until the operation completes.
        MPI_Type_free(&ttype);
        MPI_Type_free(&otype);
        off += n;
    }
    int rc2 = MPI_Win_unlock_all(win);
    MPI_Type_free(&row);
    return rc != MPI_SUCCESS ? rc : rc2;
}

int shim_get_rows(MPI_Win win, int ntargets, const int *ranks, const int *counts,
                  const MPI_Aint *tdisp, const MPI_Aint *odisp, int row_bytes, void *dst) {
    return rows_epoch(win, 0, ntargets, ranks, counts, tdisp, odisp, row_bytes, dst);
}

int shim_acc_rows(MPI_Win win, int ntargets, const int *ranks, const int *counts,
                  const MPI_Aint *tdisp, const MPI_Aint *odisp, int row_bytes, const void *src) {
    return rows_epoch(win, 1, ntargets, ranks, counts, tdisp, odisp, row_bytes, (void *)src);
}

int shim_win_settle(MPI_Win win) {
    // Remote accumulates are complete at their targets once every origin's
    // unlock_all has returned, which the barrier establishes; the sync then
    // makes them visible to this rank's plain loads (separate memory model).
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return rc;
    return shim_win_sync(win);
}

int shim_comm_dup(MPI_Comm *out) { return MPI_Comm_dup(MPI_COMM_WORLD, out); }

int shim_local_size(int *n) {
    MPI_Comm node;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Comm_size(node, n);
    MPI_Comm_free(&node);
    return rc;
}

int shim_node_leader(int *leader) {
    MPI_Comm node;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS) return rc;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    // The node's lowest world rank names the node on every rank of it.
    rc = MPI_Allreduce(&me, leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    return rc;
}

int shim_comm_split(int color, MPI_Comm *out) {
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int rc = MPI_Comm_split(MPI_COMM_WORLD, color, me, out);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
}

int shim_comm_free(MPI_Comm *comm) { return MPI_Comm_free(comm); }

int shim_win_allocate_shared(MPI_Comm comm, int64_t bytes, MPI_Win *win) {
    void *mine;
    int rc = MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, comm, &mine, win);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
}

int shim_win_shared_query(MPI_Win win, int rank, void **base) {
    MPI_Aint size;
    int unit;
    return MPI_Win_shared_query(win, rank, &size, &unit, base);
}

int shim_win_create(void *base, int64_t bytes, MPI_Win *win) {
    MPI_Info info;
    int rc = MPI_Info_create(&info);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Info_set(info, "same_disp_unit", "true");
    rc = MPI_Win_create(base, (MPI_Aint)bytes, 1, info, MPI_COMM_WORLD, win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) return rc;
    return MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
}

int shim_ibarrier(MPI_Comm comm, MPI_Request *req) { return MPI_Ibarrier(comm, req); }

// send_note sends one gate number without waiting for the send to complete.
// Notes are sent only once some rank has timed out, which ends the job, so
// their buffers are left to the process's exit rather than tracked: the
// peer may be stopped and never take its note.
static int send_note(MPI_Comm comm, int dest, int tag, int64_t seq) {
    int64_t *buf = malloc(sizeof *buf);
    if (!buf) return MPI_ERR_NO_MEM;
    *buf = seq;
    MPI_Request r;
    int rc = MPI_Isend(buf, 1, MPI_INT64_T, dest, tag, comm, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Request_free(&r);
    return rc;
}

int shim_stall_probe(MPI_Comm comm, int64_t seq, int rank, int size) {
    int rc = MPI_SUCCESS;
    for (int p = 0; p < size && rc == MPI_SUCCESS; p++) {
        if (p != rank) rc = send_note(comm, p, SHIM_TAG_PROBE, seq);
    }
    return rc;
}

int shim_note_poll(MPI_Comm comm, int *got, int *tag, int *source, int64_t *seq) {
    MPI_Status st;
    int rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, got, &st);
    if (rc != MPI_SUCCESS || !*got) return rc;
    *tag = st.MPI_TAG;
    *source = st.MPI_SOURCE;
    return MPI_Recv(seq, 1, MPI_INT64_T, st.MPI_SOURCE, st.MPI_TAG, comm, MPI_STATUS_IGNORE);
}

void shim_pause(int64_t ns) {
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    nanosleep(&ts, NULL);
}

void shim_yield(void) { sched_yield(); }

int shim_testall(int n, MPI_Request *reqs, int *done) {
    if (n == 0) { *done = 1; return MPI_SUCCESS; }
    return MPI_Testall(n, reqs, done, MPI_STATUSES_IGNORE);
}

int shim_answer_probe(MPI_Comm comm, int64_t seq, int *prober) {
    *prober = -1;
    int flag = 0;
    MPI_Status st;
    int rc = MPI_Iprobe(MPI_ANY_SOURCE, SHIM_TAG_PROBE, comm, &flag, &st);
    if (rc != MPI_SUCCESS || !flag) return rc;
    int64_t theirs;
    rc = MPI_Recv(&theirs, 1, MPI_INT64_T, st.MPI_SOURCE, SHIM_TAG_PROBE, comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return rc;
    *prober = st.MPI_SOURCE;
    return send_note(comm, st.MPI_SOURCE, SHIM_TAG_ANSWER, seq);
}
