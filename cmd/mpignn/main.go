package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sort"

	"mpignn/spmd/launched"
)

// command is one subcommand of the binary. Each lives in its own file and
// registers itself in commands().
type command struct {
	summary string
	// run gets the arguments after the command name and returns the process
	// exit error; commands that run under MPI start and stop it themselves.
	run func(args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"bench":     {"benchmarks: bench comm (transports), bench sample (the loader), bench infer (layer-wise inference), bench threads (thread scaling)", runBench},
		"gen":       {"generate a synthetic graph in the OGB raw layout, or (--format chunked, every rank its share) the chunked format", runGen},
		"download":  {"download an OGB node dataset into the raw layout", runDownload},
		"convert":   {"convert a dataset in the OGB raw layout into the chunked format (distributed partitioning input)", runConvert},
		"partition": {"split a dataset into P partitions: the OGB layout in one process (METIS or random), a chunked one with all ranks (ml, lp, PT-Scotch or random)", runPartition},
		"inspect":   {"print statistics of a partition directory", runInspect},
		"sample":    {"sample neighborhoods of seed nodes on a partitioned graph (canonical text)", runSample},
		"train":     {"train a GNN for node classification or link prediction under MPI (one rank per partition)", runTrain},
		"predict":   {"classify every node, or score node pairs (--task link), with a checkpoint (under MPI)", runPredict},
		"embed":     {"write every node's embedding (model output rows) with a checkpoint (under MPI)", runEmbed},
		"export":    {"write a checkpoint's model as a PyTorch Geometric state dict (.safetensors + .json)", runExport},
		"plot":      {"draw loss/accuracy curves of a metrics file", runPlot},
		"version":   {"print the build identity the ranks compare at start-up and the numeric path (kernels) of this machine", runVersion},
	}
}

func usage(cmds map[string]command) {
	fmt.Fprintf(os.Stderr, "usage: mpignn <command> [flags]\n\ncommands:\n")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun under MPI as: ./mpirun.sh -n P ./bin/mpignn <command> ...\n")
	fmt.Fprintf(os.Stderr, "Every rank works in %s;\nthe other commands run in one process (under mpirun rank 0 alone runs them).\n", mpiCommands)
}

func main() {
	cmds := commands()
	if len(os.Args) < 2 || os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help" {
		usage(cmds)
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	c, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "mpignn: unknown command %q\n", os.Args[1])
		usage(cmds)
		os.Exit(2)
	}
	if os.Getenv("GOGC") == "" {
		// Training holds a large live heap (partition arrays, per-step
		// activations reused in place) and makes little garbage per step
		// (~17 MB on the peer graph), so Go's default GOGC=100 let the heap
		// grow to twice the live size before collecting: 1.4 GB peak per rank
		// for 0.56 GB live. 25 caps the peak near 1.25x live for a few more
		// collections per epoch. A GOGC in the environment wins.
		debug.SetGCPercent(25)
	}
	if err := flagNames(c.run(os.Args[2:])); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // the flag set has printed the usage
		}
		var ue *usageError
		if errors.As(err, &ue) {
			// Every rank of the job got the same command line: one line
			// from the first rank says it; the others exit quietly with
			// the same code, so that mpirun ends the job at once.
			if launched.Rank() == 0 {
				fmt.Fprintf(os.Stderr, "mpignn %s: %v\n", os.Args[1], err)
			}
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "mpignn %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
