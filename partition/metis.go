package partition

/*
#cgo LDFLAGS: -lmetis
#include <stdint.h>
#include <metis.h>

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

// Functions rather than static constants: cgo cannot link to static data.
static int64_t mpignn_idx_max(void) { return IDX_MAX; }
static int mpignn_idx_width(void) { return IDXTYPEWIDTH; }

// mpignn_kway_start forks a child that runs METIS_PartGraphKway and writes
// its return code, objval and parts to out (a MAP_SHARED mapping of 2 + nv
// idx_t), and returns the child's PID (-1 and errno if fork failed). See
// kway for why METIS runs in a child. The child uses no Go: it resets
// every signal the Go runtime handles to its default, blocks SIGINT and
// SIGTERM (its parent's handlers end the job; METIS' own SIGTERM trap
// would turn one into a METIS error), dies with its parent, and ends with
// _exit.
static pid_t mpignn_kway_start(idx_t *nv, idx_t *nc, idx_t *xadj, idx_t *adj, idx_t *vwgt, idx_t *ewgt,
		idx_t *np, real_t *ub, idx_t *options, idx_t *out) {
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid != 0) {
		return pid;
	}
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_SETMASK, &block, NULL);
	for (int s = 1; s < 32; s++) {
		if (s != SIGKILL && s != SIGSTOP) {
			signal(s, SIG_DFL);
		}
	}
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
		_exit(126);
	}
	out[0] = METIS_PartGraphKway(nv, nc, xadj, adj, vwgt, NULL, ewgt, np, NULL, ub, options, &out[1], out + 2);
	_exit(0);
}

// mpignn_kway_wait waits for the child pid and returns its wait status
// (-1 and errno if waitpid failed).
static int mpignn_kway_wait(pid_t pid) {
	int status;
	for (;;) {
		pid_t r = waitpid(pid, &status, 0);
		if (r == pid) {
			return status;
		}
		if (r < 0 && errno != EINTR) {
			return -1;
		}
	}
}

static int mpignn_exited(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
static int mpignn_termsig(int status) { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"mpignn/graph"
	"mpignn/internal/testhold"
)

// Balance constraint names accepted in MetisOptions.Balance.
const (
	BalanceNode   = "node"   // every node weighs 1: equal node counts
	BalanceTrain  = "train"  // 1 for training nodes: equal training work
	BalanceValid  = "valid"  // 1 for validation nodes
	BalanceTest   = "test"   // 1 for test nodes
	BalanceDegree = "degree" // undirected degree: equal edge counts
)

// DefaultBalance returns the constraint set used when MetisOptions.Balance
// is nil. Like DistDGL (node count, training mask, degree) it balances the
// memory (nodes, edges) and the per-rank minibatch count (training nodes)
// at once. Validation/test masks are left out by default: on Facebook and
// on the products-size synthetic graph they added edge cut and METIS time
// without improving the node or training balance that the trainer needs
// (see the package tests and the report).
func DefaultBalance() []string { return []string{BalanceNode, BalanceTrain, BalanceDegree} }

// MetisOptions configures Metis.
type MetisOptions struct {
	Seed uint64
	// Balance lists the vertex-weight constraints (multi-constraint
	// partitioning, ncon = len(Balance)). nil means DefaultBalance.
	// Constraints whose total weight is zero (for example "train" on a
	// dataset without that split) are dropped because METIS cannot balance
	// them.
	Balance []string
	// Split names the split whose masks feed "train", "valid" and "test".
	Split string
	// Imbalance is the allowed load imbalance per constraint (1.03 = 3 %);
	// 0 means 1.03. It bounds METIS' target, the measured node balance is
	// usually a bit better.
	Imbalance float64
	// Workers bounds the goroutines used to build the symmetric graph;
	// 0 means GOMAXPROCS.
	Workers int
}

// balanceNames lists the constraint names Balance takes.
func balanceNames() []string {
	return []string{BalanceNode, BalanceTrain, BalanceValid, BalanceTest, BalanceDegree}
}

// Validate reports options METIS cannot run with: a Balance name it does
// not know or listed twice, or an Imbalance other than 0 (the default)
// below 1.001, infinite or NaN. Metis and MetisHetero call it; whether the
// dataset has the split Balance needs is checked on the dataset.
func (o MetisOptions) Validate() error {
	names := balanceNames()
	seen := map[string]bool{}
	for _, b := range o.Balance {
		if !slices.Contains(names, b) {
			return fmt.Errorf("unknown balance constraint %q (want %s)", b, strings.Join(names, ", "))
		}
		if seen[b] {
			return fmt.Errorf("balance constraint %q listed twice", b)
		}
		seen[b] = true
	}
	if imb := o.Imbalance; imb != 0 && (!(imb >= 1.001) || math.IsInf(imb, 0)) { // NaN fails too
		return fmt.Errorf("imbalance %g must be >= 1.001", imb)
	}
	return nil
}

// IdxWidth returns the bit width of METIS' idx_t in the linked library
// headers (32 on Debian's libmetis-dev). It is a function because cgo
// exposes C constants as variables.
func IdxWidth() int { return int(C.mpignn_idx_width()) }

// Metis partitions the undirected version of d's graph (union of in- and
// out-neighbors, self loops and duplicates removed) into nparts parts with
// METIS_PartGraphKway minimizing the edge cut. It returns the part of every
// node. nparts == 1 returns all zeros without calling METIS.
func Metis(d *graph.Dataset, nparts int, opt MetisOptions) ([]int32, error) {
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("metis: %w", err)
	}
	if d == nil || d.In == nil {
		return nil, fmt.Errorf("metis: dataset has no graph")
	}
	n := d.NumNodes
	if err := CheckParts(n, nparts); err != nil {
		return nil, fmt.Errorf("metis: %w", err)
	}
	if d.In.NumRows() != n {
		return nil, fmt.Errorf("metis: graph has %d rows but dataset has %d nodes", d.In.NumRows(), n)
	}
	balance := opt.Balance
	if balance == nil {
		balance = DefaultBalance()
	}
	return metisGraph(d.In, nparts, opt, balance, func(xadj []C.idx_t) ([]C.idx_t, int, error) {
		return vertexWeights(d, opt.Split, balance, xadj, nil)
	})
}

// MetisHetero partitions a heterogeneous graph like Metis: on the
// homogenized graph (the relation rows of d.In collapsed into one
// adjacency, symmetrized), with "node" in opt.Balance standing for one
// constraint per node type and "train"/"valid"/"test" for the masks of
// split opt.Split of node type labelType. The result is indexed by
// homogenized original id. nil opt.Balance means node and train.
func MetisHetero(d *graph.HeteroDataset, nparts int, opt MetisOptions, labelType string) ([]int32, error) {
	if err := opt.Validate(); err != nil {
		return nil, fmt.Errorf("metis: %w", err)
	}
	if err := checkHetero(d); err != nil {
		return nil, fmt.Errorf("metis: %w", err)
	}
	n := d.NumNodes()
	if err := CheckParts(n, nparts); err != nil {
		return nil, fmt.Errorf("metis: %w", err)
	}
	balance := opt.Balance
	if balance == nil {
		balance = []string{BalanceNode, BalanceTrain}
	}
	// The masks come from the labelled type's split in homogenized ids; a
	// dataset view carries them to vertexWeights.
	hd := &graph.Dataset{NumNodes: n, Splits: homogenizedSplits(d, labelType)}
	return metisGraph(collapse(d), nparts, opt, balance, func(xadj []C.idx_t) ([]C.idx_t, int, error) {
		return vertexWeights(hd, opt.Split, balance, xadj, d.Schema.NodeOrig)
	})
}

// metisGraph runs METIS_PartGraphKway on the symmetrized adjacency in (one
// row per node) with the vertex weights that weights builds from the
// symmetric offsets; balance only names the constraints in errors. Metis
// and MetisHetero share it.
func metisGraph(in *graph.CSR, nparts int, opt MetisOptions, balance []string, weights func(xadj []C.idx_t) ([]C.idx_t, int, error)) ([]int32, error) {
	n := in.NumRows()
	if nparts == 1 {
		return make([]int32, n), nil
	}
	idxMax := int64(C.mpignn_idx_max())
	if n > idxMax {
		return nil, fmt.Errorf("metis: %d nodes exceed METIS idx_t (%d-bit, max %d)", n, IdxWidth(), idxMax)
	}
	// The symmetric adjacency holds at most 2 entries per stored edge; its
	// offsets and the degree weights must fit idx_t.
	if e := in.NumEdges(); e > idxMax/2 {
		return nil, fmt.Errorf("metis: %d edges need up to %d adjacency entries, more than METIS idx_t (%d-bit) can index (max %d); rebuild libmetis with IDXTYPEWIDTH=64", e, 2*e, IdxWidth(), idxMax)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	xadj, adjncy, err := symmetrize(in, workers)
	if err != nil {
		return nil, fmt.Errorf("metis: %w", err)
	}
	vwgt, ncon, err := weights(xadj)
	if err != nil {
		return nil, fmt.Errorf("metis: %w", err)
	}
	imb := opt.Imbalance
	if imb == 0 {
		imb = 1.03
	}
	out, err := kway(xadj, adjncy, vwgt, nil, ncon, nparts, imb, opt.Seed, fmt.Sprintf("%d nodes, %d parts, constraints %v", n, nparts, balance))
	if err != nil {
		return nil, err
	}
	// A part of a partition directory must hold nodes (MetisCSR's coarse
	// graphs may leave one empty: refinement fills it).
	if err := checkNoEmptyPart(out, nparts); err != nil {
		return nil, fmt.Errorf("metis: %w", err)
	}
	return out, nil
}

// kway runs METIS_PartGraphKway (minimum edge cut) on a graph already in
// idx_t: offsets xadj, neighbours adj, vertex weights vwgt (ncon per
// vertex; nil: one unit weight) and edge weights ewgt (nil: 1), every
// constraint within ub, the 64-bit seed folded into idx_t. It checks the
// parts METIS returns; what names the input in its errors. Metis,
// MetisHetero and MetisCSR share it, so the three set METIS up alike.
func kway(xadj, adj, vwgt, ewgt []C.idx_t, ncon, nparts int, ub float64, seed uint64, what string) ([]int32, error) {
	n := len(xadj) - 1
	ubvec := make([]C.real_t, ncon)
	for i := range ubvec {
		ubvec[i] = C.real_t(ub)
	}
	var options [C.METIS_NOPTIONS]C.idx_t
	C.METIS_SetDefaultOptions(&options[0])
	options[C.METIS_OPTION_OBJTYPE] = C.METIS_OBJTYPE_CUT
	options[C.METIS_OPTION_CONTIG] = 0
	options[C.METIS_OPTION_NUMBERING] = 0
	// METIS seeds are idx_t; fold the 64-bit seed so that distinct small
	// seeds stay distinct.
	options[C.METIS_OPTION_SEED] = C.idx_t((seed ^ seed>>32) & 0x7fffffff)
	nv, nc, np := C.idx_t(n), C.idx_t(ncon), C.idx_t(nparts)
	ptr := func(a []C.idx_t) *C.idx_t {
		if len(a) == 0 {
			return nil
		}
		return &a[0]
	}
	// METIS runs in a child process: METIS_PartGraphKway replaces the
	// process's SIGTERM and SIGABRT handlers with its own while it runs
	// (GKlib's gk_sigtrap: a longjmp into the METIS thread's frame), so a
	// SIGTERM then (mpirun forwards SIGINT as one) crashed whichever Go
	// thread took it, and the Go handlers it restores lack SA_ONSTACK and
	// SA_SIGINFO. In a child it changes only the child's handlers, and the
	// parent's signal handling (tempout's cleanup: one line, exit 143)
	// works at every moment. The inputs reach the child by fork's copy of
	// memory, the parts come back through a shared mapping.
	words := 2 + n
	mem, err := syscall.Mmap(-1, 0, words*int(unsafe.Sizeof(C.idx_t(0))), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("metis: map %d parts: %w", n, err)
	}
	defer syscall.Munmap(mem)
	out := unsafe.Slice((*C.idx_t)(unsafe.Pointer(&mem[0])), words)
	pid, errno := C.mpignn_kway_start(&nv, &nc, &xadj[0], ptr(adj), ptr(vwgt), ptr(ewgt), &np, &ubvec[0], &options[0], &out[0])
	runtime.KeepAlive(xadj)
	runtime.KeepAlive(adj)
	runtime.KeepAlive(vwgt)
	runtime.KeepAlive(ewgt)
	if pid < 0 {
		return nil, fmt.Errorf("metis: start a process for METIS: %w", errno)
	}
	// A test stops here to signal the job while METIS runs.
	testhold.At("metis")
	status, errno := C.mpignn_kway_wait(pid)
	switch {
	case status == -1:
		return nil, fmt.Errorf("metis: wait for METIS (process %d): %w", pid, errno)
	case C.mpignn_termsig(status) != 0:
		sig := syscall.Signal(C.mpignn_termsig(status))
		return nil, fmt.Errorf("metis: the METIS process (%d) was killed by %v (%s)", pid, sig, what)
	case C.mpignn_exited(status) != 0:
		return nil, fmt.Errorf("metis: the METIS process (%d) could not start (exit status %d)", pid, C.mpignn_exited(status))
	}
	ret, part := out[0], out[2:]
	switch ret {
	case C.METIS_OK:
	case C.METIS_ERROR_INPUT:
		return nil, fmt.Errorf("metis: METIS_PartGraphKway rejected the input (METIS_ERROR_INPUT; %s)", what)
	case C.METIS_ERROR_MEMORY:
		return nil, fmt.Errorf("metis: METIS_PartGraphKway ran out of memory (%s)", what)
	default:
		return nil, fmt.Errorf("metis: METIS_PartGraphKway failed (code %d; %s)", int(ret), what)
	}
	res := make([]int32, n)
	for i, p := range part {
		if p < 0 || int(p) >= nparts {
			return nil, fmt.Errorf("metis: node %d assigned to part %d outside [0,%d)", i, int(p), nparts)
		}
		res[i] = int32(p)
	}
	return res, nil
}

// checkNoEmptyPart refuses an assignment that leaves a part without nodes:
// METIS may do that for tiny graphs, many parts, or many isolated nodes, and
// an empty part would give its rank nothing to train on. The error gives the
// part sizes (all of them for a few parts, else the range) and the balance.
func checkNoEmptyPart(assign []int32, nparts int) error {
	sizes := make([]int64, nparts)
	for _, p := range assign {
		sizes[p]++
	}
	var empty []string
	for p, n := range sizes {
		if n == 0 {
			empty = append(empty, strconv.Itoa(p))
		}
	}
	if len(empty) == 0 {
		return nil
	}
	const show = 10
	list := strings.Join(empty[:min(len(empty), show)], ", ")
	if len(empty) > show {
		list += ", ..."
	}
	desc := ""
	if nparts <= 16 {
		s := make([]string, nparts)
		for p, n := range sizes {
			s[p] = strconv.FormatInt(n, 10)
		}
		desc = "sizes " + strings.Join(s, "/")
	} else {
		desc = fmt.Sprintf("largest part %d nodes", slices.Max(sizes))
	}
	balance := float64(slices.Max(sizes)) * float64(nparts) / float64(len(assign))
	which := "part"
	if len(empty) > 1 {
		which = "parts"
	}
	return fmt.Errorf("%d of %d parts are empty (%s %s; %s, balance %.2f): use fewer --parts (or --method random)",
		len(empty), nparts, which, list, desc, balance)
}

// symmetrize builds the METIS input: for every node the sorted, distinct
// union of its in- and out-neighbors without itself. The adjacency is first
// filled with up to 2 entries per edge, rows are sorted in parallel, then
// compacted in place, so peak memory is one idx_t array of 2*edges.
func symmetrize(in *graph.CSR, workers int) ([]C.idx_t, []C.idx_t, error) {
	n := in.NumRows()
	xadj := make([]C.idx_t, n+1)
	// Degrees (counted at xadj[v+1]) of the raw union.
	for v := int64(0); v < n; v++ {
		for _, u := range in.Neighbors(v) {
			if u < 0 || u >= n {
				return nil, nil, fmt.Errorf("node %d has in-neighbor %d outside [0,%d)", v, u, n)
			}
			if u == v {
				continue
			}
			xadj[v+1]++
			xadj[u+1]++
		}
	}
	for v := int64(0); v < n; v++ {
		xadj[v+1] += xadj[v]
	}
	adj := make([]C.idx_t, xadj[n])
	pos := make([]C.idx_t, n)
	copy(pos, xadj[:n])
	for v := int64(0); v < n; v++ {
		for _, u := range in.Neighbors(v) {
			if u == v {
				continue
			}
			adj[pos[v]] = C.idx_t(u)
			pos[v]++
			adj[pos[u]] = C.idx_t(v)
			pos[u]++
		}
	}
	pos = nil
	parallelRanges(n, workers, func(lo, hi int64) {
		for v := lo; v < hi; v++ {
			slices.Sort(adj[xadj[v]:xadj[v+1]])
		}
	})
	// Compact: rows only shrink, so writing at w <= read start is safe.
	w := C.idx_t(0)
	start := xadj[0]
	for v := int64(0); v < n; v++ {
		end := xadj[v+1]
		xadj[v] = w
		for i := start; i < end; i++ {
			if i > start && adj[i] == adj[i-1] {
				continue
			}
			adj[w] = adj[i]
			w++
		}
		start = end
	}
	xadj[n] = w
	return xadj, adj[:w], nil
}

// parallelRanges splits [0,n) into contiguous chunks run by workers.
func parallelRanges(n int64, workers int, fn func(lo, hi int64)) {
	if workers < 1 {
		workers = 1
	}
	chunks := int64(workers) * 8
	if chunks > n {
		chunks = max(n, 1)
	}
	var wg sync.WaitGroup
	next := make(chan int64, chunks)
	for c := int64(0); c < chunks; c++ {
		next <- c
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				fn(c*n/chunks, (c+1)*n/chunks)
			}
		}()
	}
	wg.Wait()
}

// vertexWeights builds the interleaved (node-major) METIS vertex weights for
// the requested constraints, dropping all-zero ones. It returns nil weights
// for the single "node" constraint (METIS' unit default). With typeOrig
// (a heterogeneous graph's graph.Schema.NodeOrig) "node" becomes one
// constraint per node type, DistDGL's balance_ntypes: every part then gets
// its share of each type, not just of all nodes.
func vertexWeights(d *graph.Dataset, split string, balance []string, xadj []C.idx_t, typeOrig []int64) ([]C.idx_t, int, error) {
	n := d.NumNodes
	if len(balance) == 0 {
		return nil, 1, nil
	}
	// The names are MetisOptions.Validate's (Metis, MetisHetero).
	var sp *graph.Split
	needSplit := slices.ContainsFunc(balance, func(b string) bool {
		return b == BalanceTrain || b == BalanceValid || b == BalanceTest
	})
	if needSplit {
		sp = d.Splits[split]
		if sp == nil {
			return nil, 0, fmt.Errorf("balance constraints %v need split %q, which the dataset does not have", balance, split)
		}
	}
	mask := func(ids []int64) func(w []C.idx_t, ncon, c int) bool {
		return func(w []C.idx_t, ncon, c int) bool {
			any := false
			for _, v := range ids {
				if v < 0 || v >= n {
					continue // validated by Write; weights only steer balance
				}
				w[v*int64(ncon)+int64(c)] = 1
				any = true
			}
			return any
		}
	}
	var cols []weightCol
	for _, b := range balance {
		switch b {
		case BalanceNode:
			if typeOrig == nil {
				typeOrig = []int64{0, n}
			}
			for t := 0; t+1 < len(typeOrig); t++ {
				lo, hi := typeOrig[t], typeOrig[t+1]
				cols = append(cols, weightCol{func(w []C.idx_t, ncon, c int) bool {
					for v := lo; v < hi; v++ {
						w[v*int64(ncon)+int64(c)] = 1
					}
					return hi > lo
				}})
			}
		case BalanceDegree:
			cols = append(cols, weightCol{func(w []C.idx_t, ncon, c int) bool {
				any := false
				for v := int64(0); v < n; v++ {
					dg := xadj[v+1] - xadj[v]
					w[v*int64(ncon)+int64(c)] = dg
					any = any || dg > 0
				}
				return any
			}})
		case BalanceTrain:
			cols = append(cols, weightCol{mask(sp.Train)})
		case BalanceValid:
			cols = append(cols, weightCol{mask(sp.Valid)})
		case BalanceTest:
			cols = append(cols, weightCol{mask(sp.Test)})
		}
	}
	if len(cols) == 1 && balance[0] == BalanceNode {
		return nil, 1, nil
	}
	return packWeights(n, cols)
}

// weightCol fills constraint column c of the interleaved weights w (ncon
// columns) and reports whether any weight is non-zero.
type weightCol struct {
	fill func(w []C.idx_t, ncon, c int) bool
}

// packWeights fills the columns and drops the all-zero ones, which METIS
// cannot balance.
func packWeights(n int64, cols []weightCol) ([]C.idx_t, int, error) {
	// Fill each column separately into a scratch array, then keep non-zero
	// columns; with ncon <= 5 the scratch costs at most 5*n idx_t.
	ncon := len(cols)
	w := make([]C.idx_t, n*int64(ncon))
	keep := make([]bool, ncon)
	kept := 0
	for c, cl := range cols {
		keep[c] = cl.fill(w, ncon, c)
		if keep[c] {
			kept++
		}
	}
	if kept == 0 {
		return nil, 1, nil
	}
	if kept == ncon {
		return w, ncon, nil
	}
	out := make([]C.idx_t, n*int64(kept))
	for v := int64(0); v < n; v++ {
		k := 0
		for c := 0; c < ncon; c++ {
			if keep[c] {
				out[v*int64(kept)+int64(k)] = w[v*int64(ncon)+int64(c)]
				k++
			}
		}
	}
	return out, kept, nil
}
