# mpignn — the two commands a newcomer needs:
#   make run    generate a small graph, partition it, train on 2 ranks
#   make test   vet, unit tests, and every multi-rank test under mpirun (1-4 ranks)
SHELL       := /bin/bash
.SHELLFLAGS := -eo pipefail -c
GO          ?= go
MPI         ?= openmpi
NP          ?= 2
BIN         := bin/mpignn
export MPI

# `make MPI=mpich ...` builds against MPICH (build tag mpich) and launches
# with its Hydra mpirun; the default is OpenMPI.
# Go fuses multiply-adds into FMA instructions when it may assume an
# x86-64-v3 CPU (GOAMD64=v3) or on other architectures, which changes the
# last bits of the optimizer and the losses: results, and the golden tables
# of the tests, are those of the default v1 code (docs/training.md,
# "Determinism"), whatever the environment says.
export GOAMD64 := v1

ifeq ($(MPI),mpich)
export GOFLAGS += -tags=mpich
export MPIGNN_MPI := mpich
endif

.PHONY: all deps build run test test-unit test-mpi test-mpich test-readme test-cluster vet bench clean

all: build

deps:
	@scripts/deps.sh

build: deps
	$(GO) build -o $(BIN) ./cmd/mpignn

# The main job: a synthetic graph (20k nodes, 8 classes), split in NP parts
# with METIS, GraphSAGE trained on NP local ranks. Data and partitions are
# generated once under demo/ and reused.
DEMO := demo
run: build $(DEMO)/parts-$(NP)/META.json
	./mpirun.sh -n $(NP) $(BIN) train --parts $(DEMO)/parts-$(NP) --fanout 10,5 --batch 256 \
		--hidden 128 --epochs 10 --lr 0.01 --metrics $(DEMO)/metrics.jsonl

$(DEMO)/graph/raw:
	$(BIN) gen --nodes 20000 --avg-degree 10 --classes 8 --feat-dim 64 --seed 1 --out $(DEMO)/graph

$(DEMO)/parts-$(NP)/META.json: | $(DEMO)/graph/raw
	$(BIN) partition --data $(DEMO)/graph --split random --parts $(NP) --out $(DEMO)/parts-$(NP)

vet: deps
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [[ -n "$$unformatted" ]]; then echo "gofmt needed: $$unformatted" >&2; exit 1; fi
	$(GO) vet ./...

# Unit tests of every package (MPI packages run as a one-rank world), then
# the tests/ harness that runs each multi-rank test binary under mpirun.
test: vet test-unit test-mpi test-mpich test-readme test-cluster

test-unit: deps
	$(GO) test -timeout 20m $$($(GO) list ./... | grep -v '^mpignn/tests$$')

test-mpi: build
	$(GO) test -timeout 40m -v ./tests/ | grep -Ev '^=== (RUN|PAUSE|CONT)'

# The tests of how a job ends — signals, preemption (exit 75), interrupted
# outputs, stalled and failing ranks — under MPICH as well, whatever MPI=
# says: Hydra differs from OpenMPI's mpirun exactly there (docs/long-jobs.md,
# "MPICH").
# A few minutes, not the whole suite. The harness builds its own MPICH
# binaries in a temporary directory, so bin/mpignn is left alone.
MPICH_TESTS := TestPreemptCheckpointResume|TestSignalWithoutCheckpoint|TestGenChunkedFailure|TestInterruptedCommands|TestPartitionChunkedInterrupted|TestRankFailureEndsJob|TestStalledRankEndsJob|TestSlowRankNotKilled
test-mpich:
ifeq ($(MPI),mpich)
	@echo "test-mpich: test-mpi runs every test under MPICH already"
else
	MPI=mpich scripts/deps.sh
	MPI=mpich MPIGNN_MPI=mpich GOFLAGS="$(strip $(GOFLAGS) -tags=mpich)" \
		$(GO) test -count=1 -timeout 20m -v -run '^($(MPICH_TESTS))$$' ./tests/ | grep -Ev '^=== (RUN|PAUSE|CONT)'
endif

# The marked command blocks of README.md and docs/*.md, run in order in a scratch directory
# with shortened epochs (scripts/readme.sh says how and what it skips).
test-readme: build
	scripts/readme.sh

# Real Slurm (slurm-wlm + munge, installed by the test), two network-namespace
# hosts over TCP, and a rank killed mid-epoch then resumed: tests/cluster/.
test-cluster: build
	tests/cluster/run.sh

# BENCHMARKS.md: transports, then the sampler on the 200k-node peer graph
# (generated and partitioned once under demo/), then one rank's thread
# scaling on it (bench threads), then the Go benchmarks.
PEER := $(DEMO)/peer-200k
bench: build $(PEER)/parts-1/META.json $(PEER)/parts-2/META.json $(PEER)/parts-4/META.json
	./mpirun.sh -n 2 $(BIN) bench comm --rows 50000 --dim 128
	./mpirun.sh -n 4 $(BIN) bench comm --rows 50000 --dim 128
	for p in 1 2 4; do for t in rma alltoallv; do \
		./mpirun.sh -n $$p $(BIN) bench sample --parts $(PEER)/parts-$$p --steps 40 --transport $$t; done; done
	./mpirun.sh -n 2 $(BIN) bench sample --parts $(PEER)/parts-2 --steps 40 --cache-mb 20
	./mpirun.sh -n 1 $(BIN) bench threads --parts $(PEER)/parts-1 --fanout 15,10,5 --batch 1024 --hidden 256 \
		--infer --out $(DEMO)/threads.jsonl
	# Where a step's CPU goes (issue 43): one rank, one thread, 30 steps, the phases in the
	# metrics file and the profile's top functions.
	$(BIN) train --parts $(PEER)/parts-1 --fanout 15,10,5 --batch 1024 --hidden 256 --layers 3 --lr 0.003 \
		--dropout 0.5 --seed 1 --epochs 1 --max-steps 30 --threads 1 --eval sampled --eval-fanout 1,1,1 \
		--metrics $(DEMO)/phases.jsonl --cpuprofile $(DEMO)/train.prof
	$(GO) tool pprof -top -nodecount 25 $(BIN) $(DEMO)/train.prof
	$(GO) test -run '^$$' -bench . -benchtime 3x ./graph/ ./partition/ ./sample/... ./train/ ./train/kernels/ ./train/kernels/simd/

$(PEER)/raw:
	$(BIN) gen --nodes 200000 --avg-degree 40 --classes 47 --feat-dim 100 \
		--train 100000 --valid 20000 --test 80000 --seed 1 --out $(PEER)

$(PEER)/parts-%/META.json: | $(PEER)/raw
	$(BIN) partition --data $(PEER) --parts $* --out $(PEER)/parts-$*

clean:
	rm -rf bin $(DEMO)
