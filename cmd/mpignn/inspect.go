package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"mpignn/partition"
)

func runInspect(args []string) error { return inspect(os.Stdout, args) }

// inspect prints the statistics of a partition directory to w; for a
// heterogeneous partition they include the nodes of every type per part and
// every relation's edges and cut (partition.Stats.Hetero).
func inspect(w io.Writer, args []string) error {
	fs := newFlagSet("inspect", "mpignn inspect PARTDIR [--json] [--verify]",
		"Prints the statistics of the partition directory PARTDIR (from mpignn partition): nodes, edges, cut,\n"+
			"split shares and link-split counts per part.")
	asJSON := fs.Bool("json", false, "print the statistics as one JSON object")
	verify := fs.Bool("verify", false, "also load every part, checking sizes and checksums of all files")
	// Accept flags before and after the directory (mpignn inspect DIR --json).
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 1 {
		return errors.New("usage: mpignn inspect PARTDIR [--json] [--verify]")
	}
	dir := pos[0]
	m, err := partition.LoadMeta(dir)
	if err != nil {
		return err
	}
	if *verify {
		for p := 0; p < m.NumParts; p++ {
			if _, err := partition.LoadWithMeta(dir, m, p); err != nil {
				return err
			}
		}
	}
	s := m.Stats()
	if *asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	if err := s.WriteText(w); err != nil {
		return err
	}
	if *verify {
		fmt.Fprintf(w, "verified: all %d parts load with matching sizes and checksums\n", m.NumParts)
	}
	return nil
}
