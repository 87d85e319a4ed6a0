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
ifeq ($(MPI),mpich)
export GOFLAGS += -tags=mpich
export MPIGNN_MPI := mpich
endif

.PHONY: all deps build run test test-unit test-mpi vet bench clean

all: build

deps:
	@scripts/deps.sh

build: deps
	$(GO) build -o $(BIN) ./cmd/mpignn

run: build
	./mpirun.sh -n $(NP) $(BIN) bench comm --rows 50000 --dim 128

vet: deps
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [[ -n "$$unformatted" ]]; then echo "gofmt needed: $$unformatted" >&2; exit 1; fi
	$(GO) vet ./...

# Unit tests of every package (MPI packages run as a one-rank world), then
# the tests/ harness that runs each multi-rank test binary under mpirun.
test: vet test-unit test-mpi

test-unit: deps
	$(GO) test -timeout 20m $$($(GO) list ./... | grep -v '^mpignn/tests$$')

test-mpi: build
	$(GO) test -timeout 40m -v ./tests/ | grep -Ev '^=== (RUN|PAUSE|CONT)'

bench: build
	./mpirun.sh -n 2 $(BIN) bench comm --rows 50000 --dim 128
	./mpirun.sh -n 4 $(BIN) bench comm --rows 50000 --dim 128
	$(GO) test -run '^$$' -bench . -benchtime 3x ./graph/ ./partition/ ./sample/ ./train/

clean:
	rm -rf bin
