package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"mpignn/collectives"
	"mpignn/partition"
	"mpignn/partition/dpartition"
	"mpignn/sample/dsample"
	"mpignn/spmd"
	"mpignn/train/kernels"
)

// Start-up agreement. Every collective command (train, predict, sample,
// bench) first checks that all ranks run the same build with the same
// settings on the same partition: on a cluster one node can see a stale copy
// of the partition directory, and an MPMD launch or a per-rank job script can
// hand ranks different flags. Ranks that disagree would otherwise exchange
// messages of different sizes (heap corruption, MPI_ERR_TRUNCATE) or wait in
// different collectives (a hang).

// rankLocal reports whether a flag's value may legitimately differ between
// ranks: paths only one rank uses (rank 0 writes metrics, checkpoints and
// predictions, and reads the checkpoint), the partition path (each node may
// hold its own copy; its content is compared through META.json instead),
// per-node thread counts and console output.
func rankLocal(flagName string) bool {
	switch flagName {
	case "parts", "data", "cache-dir", "metrics", "checkpoint", "out", "pairs", "threads", "quiet":
		return true
	}
	return false
}

// flagFields lists every flag of fs (set or default) that all ranks must
// share, in the flag set's (sorted) order.
func flagFields(fs *flag.FlagSet) []collectives.Field {
	var out []collectives.Field
	fs.VisitAll(func(f *flag.Flag) {
		if !rankLocal(f.Name) {
			out = append(out, collectives.Field{Name: "--" + f.Name, Value: f.Value.String()})
		}
	})
	return out
}

// startupFields are the fields of a command: the build, the command name and
// its shared flags.
func startupFields(command string, fs *flag.FlagSet) []collectives.Field {
	return append([]collectives.Field{
		{Name: "mpignn build", Value: buildVersion(), Source: "the binary"},
		{Name: "command", Value: command},
	}, flagFields(fs)...)
}

// buildVersion identifies the binary. A build from a clean checkout is named
// by its commit (so the same commit built separately on two nodes agrees);
// otherwise — uncommitted changes, or no version control information — by
// the SHA-256 of the executable itself, which is exact.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return exeDigest()
	}
	var rev, tags string
	modified := true
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		case "-tags":
			tags = s.Value
		}
	}
	id := "rev " + rev
	if rev == "" || modified {
		id = exeDigest()
	}
	if tags != "" {
		id += " tags " + tags
	}
	return fmt.Sprintf("%s (%s)", id, bi.GoVersion)
}

// runVersion implements `mpignn version`: the build identity every rank
// compares at start-up, so a user can check the binaries of two nodes, and
// the numeric path this machine's products take (with --isa, capped as
// train's --isa caps it), so a user can check which nodes compute alike.
func runVersion(args []string) error {
	fs := newFlagSet("version", "mpignn version [--isa CLASS]",
		"Prints the build identity (commit, or the executable's SHA-256) that the ranks compare at start-up,\n"+
			"then the numeric path of this machine's float32 products (kernels: library, precision, instruction set).")
	var isa string
	addISAFlag(fs, &isa)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := setISA(isa); err != nil {
		return err
	}
	fmt.Println(buildVersion())
	fmt.Println("kernels: " + kernels.Path())
	return nil
}

// exeDigest is "sha256 " and the first 16 hex digits of the executable's
// SHA-256, or a note saying why it could not be read.
func exeDigest() string {
	path, err := os.Executable()
	if err != nil {
		return "unknown executable"
	}
	f, err := os.Open(path)
	if err != nil {
		return "unreadable executable"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable executable"
	}
	return "sha256 " + hex.EncodeToString(h.Sum(nil))[:16]
}

// agreeStartup is the first collective of a command: it checks that every
// rank holds the same fields (see collectives.AgreeFields).
func agreeStartup(c *collectives.Comm, fields []collectives.Field) error {
	if err := collectives.AgreeFields(c, fields); err != nil {
		return fmt.Errorf("ranks disagree at start-up: %w", err)
	}
	return nil
}

// openRankPart is the start of the commands that read one partition per
// rank (sample, bench sample, bench infer): the communicator, the start-up
// agreement on the shared flags and the partition's files, and this rank's
// part. timeout is the stall watchdog's (--timeout). It is collective.
func openRankPart(w *spmd.World, parts string, timeout time.Duration, shared []collectives.Field) (*collectives.Comm, *partition.Part, error) {
	c, err := newComm(w, timeout)
	if err != nil {
		return nil, nil, err
	}
	if err := agreeStartup(c, append(shared, dpartition.MetaFields(parts)...)); err != nil {
		return nil, nil, err
	}
	part, err := dsample.OpenPart(c, parts)
	if err != nil {
		return nil, nil, err
	}
	return c, part, nil
}

// parsePartsCommand parses the flags of a command that reads one partition
// per rank (sample, bench sample, bench infer): no positional arguments,
// --parts required (parts points at its value), and --timeout, which it
// declares (into timeout). It returns the flags every rank must agree on.
func parsePartsCommand(fs *flag.FlagSet, args []string, name string, parts *string, timeout *time.Duration) ([]collectives.Field, error) {
	addTimeoutFlag(fs, timeout)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *parts == "" {
		return nil, errors.New("--parts DIR is required")
	}
	return startupFields(name, fs), nil
}
