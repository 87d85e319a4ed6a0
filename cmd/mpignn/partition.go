package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"mpignn/config"
	"mpignn/graph"
	"mpignn/internal/tempout"
	"mpignn/partition"
	"mpignn/partition/dpartition"
)

// partitionConfig holds the flags of `mpignn partition`.
type partitionConfig struct {
	data, out, split, method, balance string
	parts, workers                    int
	seed                              uint64
	haloFeats, undirected, force      bool
	sparse                            string // --sparse-features
	featDType                         string // --feat-dtype
	time                              bool
	// nodeFeat is --node-feat (graph.FromEdgesMean/Sum), edgeFeat
	// --edge-feat: node features made from the edge features, and the
	// edge features kept with the parts.
	nodeFeat  string
	edgeFeat  bool
	normalize bool
	imbalance float64
	// link is the link-prediction split (nil without --link-split).
	link *partition.LinkOptions
	// Heterogeneous datasets only: the labelled node type whose labels and
	// splits the partition keeps, and relations left without a reverse.
	labels    string // --labels: graph.LabelsClasses, LabelsReal or "" (by the file's width)
	labelType string
	noReverse string
	// Chunked datasets (distributed partitioning): per-type assignment
	// files, and whether --method was given (its default metis then
	// becomes random).
	assignment string
	methodSet  bool
	// chunkedMethod is the distributed method of a chunked --data
	// (dpartition.ChooseMethod of --method and --assignment).
	chunkedMethod string
}

func parsePartition(args []string) (partitionConfig, error) {
	fs := newFlagSet("partition", "mpignn partition --data RAWDIR --parts P --out PARTDIR [flags]",
		"Splits a dataset in the OGB raw layout into P parts, one per rank of a later train/predict/sample run\n"+
			"(METIS by default, in one process: under mpirun rank 0 alone runs it); with --link-split it also holds\n"+
			"out edges for link prediction. A chunked dataset (mpignn convert) is partitioned by all ranks instead:\n"+
			"./mpirun.sh -n P ./bin/mpignn partition --data CHUNKED --parts P --out PARTDIR (multilevel, --method ml, by default).")
	var c partitionConfig
	fs.StringVar(&c.data, "data", "", "dataset directory in the OGB raw layout (required)")
	fs.StringVar(&c.out, "out", "", "output partition directory (required; must not exist unless --force)")
	fs.StringVar(&c.split, "split", "", `split steering METIS balance and recorded as default ("" = public if present, else the first split)`)
	fs.IntVar(&c.parts, "parts", 0, "number of partitions P (required, 1 <= P <= nodes)")
	fs.StringVar(&c.method, "method", partition.MethodMetis, "partitioning method: metis or random; for a chunked dataset ml (multilevel, its default), lp, parmetis (PT-Scotch) or random")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of METIS, PT-Scotch, lp, ml, random partitioning and the link split (default 1, as train --part-seed)")
	fs.BoolVar(&c.haloFeats, "halo-feats", false, "also store the features of each part's 1-hop halo")
	fs.StringVar(&c.sparse, "sparse-features", partition.SparseAuto, fmt.Sprintf("store node features as CSR rows: auto (when under %g %% nonzero; homogeneous node partitions only), on or off", 100*partition.SparseAutoDensity))
	fs.StringVar(&c.featDType, "feat-dtype", "fp32", "type the node features are stored in: fp32, bf16 or fp16 (two bytes a value, rounded to nearest even, widened to fp32 when read; fp16 refuses a value beyond ±65504; homogeneous dense features only)")
	fs.BoolVar(&c.undirected, "undirected", true, "add reverse edges, drop self loops and duplicates (the datasets here list each undirected edge once)")
	fs.BoolVar(&c.normalize, "normalize-feats", false, "row-normalize features (divide each row by its sum)")
	fs.StringVar(&c.balance, "balance", "", "METIS balance constraints, comma-separated from node,train,valid,test,degree (default node,train,degree)")
	fs.Float64Var(&c.imbalance, "imbalance", 0, "METIS allowed imbalance per constraint (0 = 1.03)")
	fs.IntVar(&c.workers, "workers", 0, "parallelism (0 = GOMAXPROCS)")
	fs.BoolVar(&c.force, "force", false, "replace an existing partition directory at --out")
	fs.BoolVar(&c.time, "time", false, "read the edge times (raw/edge_time.csv.gz) or node times (raw/node_time.csv.gz, raw/node_year.csv.gz) and store them with the parts, for temporal sampling; the adjacency then keeps repeated edges at different times")
	fs.StringVar(&c.labels, "labels", "", "how raw/node-label.csv.gz is read: classes (one integer per node) or real (real targets of any width, NaN unlabelled, for train --task multilabel or regression); default: classes when the file has one column, real when several")
	fs.StringVar(&c.nodeFeat, "node-feat", "", nodeFeatFlagUsage)
	fs.BoolVar(&c.edgeFeat, "edge-feat", false, "read the edge features (raw/edge-feat.csv.gz, one row per line of raw/edge.csv.gz; a chunked dataset's edge_data feat; a heterogeneous dataset's relation attributes raw/relations/<rel>/edge_<name>.csv.gz but edge_time, one column each) and store them with each part's in-edges (edge_feat.bin)")
	fs.StringVar(&c.labelType, "label-type", "", "heterogeneous datasets: the labelled node type to keep labels and splits of (default: the only labelled type)")
	fs.StringVar(&c.noReverse, "no-reverse", "", "heterogeneous datasets: comma-separated relations (src___rel___dst) NOT given a reverse relation; \"all\" for none (default: every relation gets rev_<rel>)")
	fs.StringVar(&c.assignment, "assignment", "", "chunked datasets: directory of per-type part-id files (<node type>.txt, one line per node; _N.txt when homogeneous), as DistDGL's pipeline takes")
	linkSplit := fs.String("link-split", "", "link-prediction split: random:TRAIN,VALID,TEST (fractions of the distinct undirected pairs, seeded by --seed) or time (split/time files); adjacency then holds training edges only")
	linkNegs := fs.Int("link-negs", partition.DefaultNegsPerPos, "fixed negatives per valid/test edge (MRR), with --link-split")
	linkPool := fs.Int64("link-pool", partition.DefaultPool, "random pairs in each of the valid and test negative pools (Hits@K), with --link-split")
	linkValidAdj := fs.Bool("link-valid-adj", true, "store the valid edges' adjacency for test-time inference (--use-valid-edges), with --link-split")
	relation := fs.String("relation", "", "heterogeneous datasets, with --link-split: the relation (src___rel___dst) whose edges are split; --link-split may then also name a split directory (time, u1)")
	structFeats := fs.Int("struct-feats", 0, fmt.Sprintf("structural node features (log-degrees of the training graph + fixed random codes) of this width, replacing the dataset's; 0 = %d only for a dataset without features; with --link-split", partition.DefaultStructFeats))
	edgeLabels := fs.String("edge-labels", "", "with --link-split random:...: how raw/edge-label.csv.gz (the edge task's labels, one row per edge line; a chunked dataset's edge_data label) is read: classes or real; default: read when present, classes when it has one column (integer chunks), real when several (float chunks)")
	linkGraph := fs.String("link-graph", partition.LinkGraphTrain, "with --link-split: the message-passing adjacency, train (training edges only) or all (train+valid+test events with their times; needs --time and a time split, and only temporal sampling may use it)")
	if err := parseFlags(fs, args); err != nil {
		return c, err
	}
	if err := c.parseLink(fs, *linkSplit, *relation, *linkNegs, *linkPool, *linkValidAdj, *structFeats, *linkGraph); err != nil {
		return c, err
	}
	if *edgeLabels != "" {
		if c.link == nil {
			return c, errors.New("--edge-labels needs --link-split (random:TRAIN,VALID,TEST or time): edge labels are held out with the link split")
		}
		c.link.EdgeLabels = *edgeLabels
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.data == "" || c.out == "" {
		return c, errors.New("--data RAWDIR (the dataset) and --out PARTDIR (the new partition directory) are required; mpignn partition --help lists the flags")
	}
	if c.parts < 1 {
		if !flagSet(fs, "parts") {
			return c, errors.New("--parts P is required: the number of partitions, one per rank of the later run (./mpirun.sh -n P)")
		}
		return c, fmt.Errorf("--parts %d: must be at least 1", c.parts)
	}
	fs.Visit(func(f *flag.Flag) { c.methodSet = c.methodSet || f.Name == "method" })
	if c.assignment != "" && !isChunked(c.data) {
		return c, fmt.Errorf("--assignment applies to a chunked dataset (a directory with %s); %s is not one", graph.ChunkedMetaFile, c.data)
	}
	opt := partition.Options{Method: c.method, SparseFeatures: c.sparse, Split: c.split, Link: c.link, Time: c.time,
		NodeFeat: c.nodeFeat, EdgeFeat: c.edgeFeat, FeatDType: c.featDType}
	if isChunked(c.data) {
		// The distributed partitioner's methods and flags, checked here
		// so that a mistake is one line from one rank (exit code 2).
		var err error
		if c.chunkedMethod, err = dpartition.ChooseMethod(c.method, c.methodSet, c.assignment); err != nil {
			return c, err
		}
		if err := c.refuseForChunked(); err != nil {
			return c, err
		}
		opt.Method = "" // checked above: parmetis, lp and ml are methods there
	}
	if err := opt.Validate(); err != nil {
		var fe *config.FieldError
		if errors.As(err, &fe) && fe.Field == "Method" {
			// This command also partitions chunked datasets (dpartition).
			return c, fmt.Errorf("%w (parmetis, lp or ml for a chunked dataset)", flagNames(err))
		}
		return c, flagNames(err)
	}
	return c, nil
}

// parseLink sets c.link from the link flags, which partition.Options
// validates. Its own rules are about the command line only: a link flag
// given without --link-split, and an explicit 0 for --link-negs or
// --link-pool (0 is the library's "default"; the flags spell their
// default out, so a 0 typed there is a mistake, refused as before).
func (c *partitionConfig) parseLink(fs *flag.FlagSet, split, relation string, negs int, pool int64, validAdj bool, structFeats int, linkGraph string) error {
	if split == "" {
		var err error
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "link-negs", "link-pool", "link-valid-adj", "struct-feats", "relation", "link-graph":
				if err == nil {
					err = fmt.Errorf("--%s needs --link-split", f.Name)
				}
			}
		})
		return err
	}
	if err := explicitZero(fs, "link-negs", "link-pool"); err != nil {
		return err
	}
	// Unset, --link-negs and --link-pool go to the library as 0 (its
	// default): the same K and pool as the flags' defaults, except for a
	// split that stores its own negatives (OGB's .pt files), which fix
	// them and which only a typed value contradicts.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["link-negs"] {
		negs = 0
	}
	if !given["link-pool"] {
		pool = 0
	}
	lo := &partition.LinkOptions{Split: split, NegsPerPos: negs, Pool: pool, NoValidAdj: !validAdj, StructFeats: structFeats, Relation: relation, Graph: linkGraph}
	if linkGraph == partition.LinkGraphTrain {
		lo.Graph = "" // the default stays "" so that Key and META are as before
	}
	c.link = lo
	return nil
}

func runPartition(args []string) error { return partitionCmd(os.Stdout, args) }

// partitionCmd runs `mpignn partition`, printing progress and statistics to w.
func partitionCmd(w io.Writer, args []string) error {
	c, err := parsePartition(args)
	if err != nil {
		return flagMistake(err)
	}
	if !isChunked(c.data) && !onRankZero("partition", "a dataset in the OGB raw layout is partitioned by one process") {
		return nil
	}
	// Refuse an existing output before spending minutes on reading.
	if _, err := os.Stat(c.out); err == nil && !c.force {
		return fmt.Errorf("output %s already exists (remove it or pass --force)", c.out)
	}
	// SIGINT/SIGTERM (Ctrl-C, scancel, a Slurm time limit) remove the
	// half-written partition directory and exit 130/143.
	cleanup := tempout.NewCleanup("mpignn partition")
	defer cleanup.Listen()()
	cleanup.Add(tempout.Own(c.out))
	if isChunked(c.data) {
		return partitionChunked(w, c, cleanup)
	}
	opt := partition.Options{
		Method: c.method, Seed: c.seed, HaloFeats: c.haloFeats, Split: c.split, LabelType: c.labelType,
		Imbalance: c.imbalance, Undirected: c.undirected, Overwrite: c.force, Workers: c.workers,
		Link: c.link, Time: c.time, SparseFeatures: c.sparse, NodeFeat: c.nodeFeat, EdgeFeat: c.edgeFeat,
		FeatDType: c.featDType,
	}
	if c.balance != "" {
		for _, b := range strings.Split(c.balance, ",") {
			opt.Balance = append(opt.Balance, strings.TrimSpace(b))
		}
	}
	src := partition.Source{Data: c.data, Undirected: c.undirected, NoReverseAll: c.noReverse == "all",
		NormalizeFeatures: c.normalize, Workers: c.workers, Labels: c.labels}
	if c.noReverse != "" && c.noReverse != "all" {
		for _, r := range strings.Split(c.noReverse, ",") {
			src.NoReverse = append(src.NoReverse, strings.TrimSpace(r))
		}
	}
	if c.labels != "" && c.labels != graph.LabelsClasses && c.labels != graph.LabelsReal {
		return fmt.Errorf("--labels %s: want %s or %s", c.labels, graph.LabelsClasses, graph.LabelsReal)
	}
	t0 := time.Now()
	raw, err := partition.ReadRaw(src, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "read %s: %s in %.1fs\n", c.data, raw.Summary(), time.Since(t0).Seconds())
	var tAssign, tWrite time.Duration
	m, err := raw.Partition(c.out, c.parts, func(name string, d time.Duration) {
		if name == "assign" {
			tAssign = d
		} else {
			tWrite = d
		}
	})
	if err != nil {
		return err
	}
	return reportPartition(w, c, m, tAssign, tWrite)
}

// reportPartition prints the timing line, a warning for a split without
// training nodes, and the partition statistics.
func reportPartition(w io.Writer, c partitionConfig, m *partition.Meta, tAssign, tWrite time.Duration) error {
	fmt.Fprintf(w, "partitioned by %s in %.1fs, wrote %s in %.1fs\n", m.Method, tAssign.Seconds(), c.out, tWrite.Seconds())
	if sc, ok := m.Splits[m.Split]; ok && sc.Train == 0 {
		// Still useful for predict, so a warning rather than an error.
		fmt.Fprintf(w, "warning: split %s has no training nodes; mpignn train will refuse it\n", m.Split)
	}
	return m.Stats().WriteText(w)
}
