package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"mpignn/internal/osx"
	"mpignn/partition"
)

func runInspect(args []string) error {
	if !onRankZero("inspect", "a partition is inspected by one process") {
		return nil
	}
	return inspect(os.Stdout, args)
}

// inspect prints the statistics of a partition directory to w; for a
// heterogeneous partition they include the nodes of every type per part and
// every relation's edges and cut (partition.Stats.Hetero).
func inspect(w io.Writer, args []string) error {
	fs := newFlagSet("inspect", "mpignn inspect PARTDIR [--json] [--verify]\n       mpignn inspect PARTDIR --link-pairs train|valid|test --out FILE.csv",
		"Prints the statistics of the partition directory PARTDIR (from mpignn partition): nodes, edges, cut,\n"+
			"split shares and link-split counts per part.")
	asJSON := fs.Bool("json", false, "print the statistics as one JSON object")
	verify := fs.Bool("verify", false, "also load every part, checking sizes and checksums of all files")
	linkPairs := fs.String("link-pairs", "", "link partitions: write split train, valid or test as CSV to --out instead of the statistics: src,dst,kind,id lines in original ids, kind pos (id = the positive's edge id), neg (its fixed negatives, in order; id = the positive's) or pool (id = the pool index; train has positives only); mpignn predict --task link --pairs scores the file as it is")
	out := fs.String("out", "", "output file of --link-pairs")
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
		return errors.New("want one partition directory: mpignn inspect PARTDIR [--json] [--verify] (mpignn inspect --help)")
	}
	dir := pos[0]
	m, err := partition.LoadMeta(dir)
	if err != nil {
		return err
	}
	if *linkPairs != "" || *out != "" {
		return writeLinkPairs(w, dir, m, *linkPairs, *out)
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

// writeLinkPairs writes split (valid or test) of the link partition at dir
// as CSV to out: the positives in edge-id order, each followed by its fixed
// negatives, then the negative pool, so that the figures train reports can
// be recomputed from predict's scores of the file.
func writeLinkPairs(w io.Writer, dir string, m *partition.Meta, split, out string) error {
	switch {
	case m.Link == nil:
		return fmt.Errorf("--link-pairs: partition %s has no link split (partition --link-split)", dir)
	case split != "train" && split != "valid" && split != "test":
		return fmt.Errorf("--link-pairs %q: want train, valid or test", split)
	case out == "":
		return errors.New("--link-pairs needs --out FILE.csv")
	}
	type pos struct {
		id, src, dst int64
		negs         []int64
	}
	var ps []pos
	var pool [][3]int64 // index, src, dst
	for p := 0; p < m.NumParts; p++ {
		pt, err := partition.LoadWithMeta(dir, m, p)
		if err != nil {
			return err
		}
		e, negs, pl := &pt.Link.Valid, pt.Link.ValidNegOrig, &pt.Link.ValidPool
		k := m.Link.NegsPerPos
		switch split {
		case "test":
			e, negs, pl = &pt.Link.Test, pt.Link.TestNegOrig, &pt.Link.TestPool
		case "train":
			// Training positives have no fixed negatives or pool.
			e, negs, pl, k = &pt.Link.Train, nil, &partition.LinkEdges{}, 0
		}
		for i := range e.Len() {
			ps = append(ps, pos{e.ID[i], e.SrcOrig[i], e.DstOrig[i], negs[i*k : (i+1)*k]})
		}
		for i := range pl.Len() {
			pool = append(pool, [3]int64{pl.ID[i], pl.SrcOrig[i], pl.DstOrig[i]})
		}
	}
	slices.SortFunc(ps, func(a, b pos) int { return cmp.Compare(a.id, b.id) })
	slices.SortFunc(pool, func(a, b [3]int64) int { return cmp.Compare(a[0], b[0]) })
	var b bytes.Buffer
	fmt.Fprintf(&b, "src,dst,kind,id\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "%d,%d,pos,%d\n", p.src, p.dst, p.id)
		for _, v := range p.negs {
			fmt.Fprintf(&b, "%d,%d,neg,%d\n", p.src, v, p.id)
		}
	}
	for _, q := range pool {
		fmt.Fprintf(&b, "%d,%d,pool,%d\n", q[1], q[2], q[0])
	}
	if err := osx.WriteFileAtomic(out, b.Bytes()); err != nil {
		return err
	}
	k := m.Link.NegsPerPos
	if split == "train" {
		k = 0
	}
	fmt.Fprintf(w, "inspect: wrote %s split %s to %s: %d positives, %d negatives each, %d pool pairs\n", dir, split, out, len(ps), k, len(pool))
	return nil
}
