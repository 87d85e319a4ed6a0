package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mpignn/graph"
	"mpignn/graph/chunkgen"
	"mpignn/internal/osx"
	"mpignn/internal/tempout"
)

// genConfig is the command line of `mpignn gen`.
type genConfig struct {
	species                int        // --species
	targetsFlag            string     // --targets as given
	edgeLabelsFlag         string     // --edge-labels as given (parsed into targets)
	targets                genTargets // and parsed
	format                 string
	out                    string
	chunkNodes, chunkEdges int64
	// o is the homogeneous graph; with hetero, h the heterogeneous one
	// (its shared flags taken from o where given), scaled from ogbn-mag.
	o      graph.GenOptions
	hetero bool
	h      graph.HeteroGenOptions
	scale  float64
	set    map[string]bool // the flags given
}

// runGen implements `mpignn gen`: generate a synthetic graph with planted
// communities and write it in the OGB raw layout, or with --format chunked
// in the chunked format, every rank of the job its share (runGenChunked).
func runGen(args []string) (err error) {
	g, err := parseGen(args)
	if err != nil {
		return err
	}
	// Until the checks pass, an error is a mistake on the command line
	// (exit code 2); checking ends where the work starts.
	checking := true
	defer func() {
		if checking {
			err = flagMistake(err)
		}
	}()
	if g.format != genFormatOGB || g.set["chunk-nodes"] || g.set["chunk-edges"] {
		// Every rank of an mpirun job checks the same command line before
		// MPI starts: the first rank alone prints a mistake (see main).
		defer func() {
			var ue *usageError
			if err != nil && !errors.As(err, &ue) && !errors.Is(err, flag.ErrHelp) {
				err = &usageError{err.Error()}
			}
		}()
	}
	if err := g.check(); err != nil {
		return err
	}
	checking = false
	if g.format != genFormatChunked && !onRankZero("gen", "--format ogb is written by one process") {
		return nil
	}
	switch {
	case g.hetero && g.format == genFormatChunked:
		if err := checkGenOut(g.out); err != nil {
			return err
		}
		gen, err := newChunkGen(chunkgen.NewHetero(chunkgen.HeteroOptions{HeteroGenOptions: g.h, ChunkNodes: g.chunkNodes, ChunkEdges: g.chunkEdges}))
		if err != nil {
			return err
		}
		return runGenChunked(gen, g.out)
	case g.hetero:
		return runGenHetero(g.h, g.out)
	}
	if err := checkGenOut(g.out); err != nil {
		return err
	}
	if g.format == genFormatChunked {
		gen, err := newChunkGen(chunkgen.New(chunkgen.Options{GenOptions: g.o, ChunkNodes: g.chunkNodes, ChunkEdges: g.chunkEdges}))
		if err != nil {
			return err
		}
		return runGenChunked(gen, g.out)
	}
	return runGenOGB(g.o, g.out, g.targets, g.species)
}

// parseGen declares and parses the flags of gen; their defaults are the
// generator's (graph.DefaultGenOptions, graph.DefaultHeteroGenOptions).
func parseGen(args []string) (*genConfig, error) {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	g := &genConfig{}
	d, dh := graph.DefaultGenOptions(), graph.DefaultHeteroGenOptions()
	fs.StringVar(&g.format, "format", genFormatOGB, "output layout: ogb (the OGB raw layout, one process) or chunked (DistDGL's chunked format, the distributed partitioner's input; under mpirun every rank writes its share, the same files on any rank count)")
	fs.Int64Var(&g.chunkNodes, "chunk-nodes", chunkgen.DefaultChunkNodes, "--format chunked: nodes per node-data chunk (bounds a rank's memory; ranks write whole chunks)")
	fs.Int64Var(&g.chunkEdges, "chunk-edges", chunkgen.DefaultChunkEdges, "--format chunked: directed edges per edge chunk (bounds a rank's memory)")
	o := &g.o
	fs.Int64Var(&o.Nodes, "nodes", d.Nodes, "number of nodes")
	fs.Float64Var(&o.AvgDegree, "avg-degree", d.AvgDegree, "mean undirected degree (directed edges / nodes); the edge file gets nodes*avg-degree lines")
	fs.IntVar(&o.Classes, "classes", d.Classes, "number of classes (planted communities)")
	fs.IntVar(&o.FeatDim, "feat-dim", d.FeatDim, "feature dimension")
	fs.Uint64Var(&o.Seed, "seed", 0, "random seed (same seed, same graph) (default 0)")
	fs.StringVar(&g.out, "out", "", "output dataset directory (must not exist or be empty)")
	fs.Float64Var(&o.TrainFrac, "train-frac", 0, fmt.Sprintf("fraction of nodes in train (default %g when no split flag is given)", d.TrainFrac))
	fs.Float64Var(&o.ValidFrac, "valid-frac", 0, fmt.Sprintf("fraction of nodes in valid (default %g); test gets the rest", d.ValidFrac))
	fs.Int64Var(&o.Train, "train", 0, "train node count (counts override fractions)")
	fs.Int64Var(&o.Valid, "valid", 0, "valid node count")
	fs.Int64Var(&o.Test, "test", 0, "test node count (default: all nodes not in train/valid)")
	fs.Float64Var(&o.Homophily, "homophily", d.Homophily, "probability that an edge is planted inside a class")
	fs.Float64Var(&o.FeatSep, "feat-sep", d.FeatSep, "distance scale between class centroids, in units of the feature noise (2: features alone classify ~45% of 47 classes)")
	fs.Float64Var(&o.PowerLaw, "power-law", d.PowerLaw, "exponent of the power-law degree distribution (> 2)")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines (0 = GOMAXPROCS); does not change the output")
	fs.BoolVar(&o.EdgeTime, "edge-time", false, fmt.Sprintf("also write edge times (raw/edge_time.csv.gz; with --hetero per relation; --format chunked: edge_data time), uniform in [0,%d) from --seed", graph.GenTimeRange))
	fs.BoolVar(&o.NodeTime, "node-time", false, fmt.Sprintf("also write node times (raw/node_time.csv.gz; with --hetero raw/node_time/<type>/; --format chunked: node_data time), uniform in [0,%d) from --seed", graph.GenTimeRange))
	fs.IntVar(&g.species, "species", 0, "also write a species-style split (split/species, as ogbn-proteins has): S groups of consecutive node ids, whole groups held out (60% of them train, 20% valid, the rest test); S >= 3")
	fs.StringVar(&g.edgeLabelsFlag, "edge-labels", "", "also write raw/edge-label.csv.gz, one label per edge line from the endpoints' planted classes plus noise: classes:C (one class per edge) or regression:K (K values per edge); for train --task edge")
	fs.StringVar(&g.targetsFlag, "targets", "", "write real targets instead of class labels: multilabel:K (K binary tasks per node, each 1 mostly within one planted class) or regression:K (K values per node from its class plus noise); for train --task multilabel or regression")
	fs.IntVar(&o.EdgeFeatDim, "edge-feat-dim", 0, "also write edge features of this width (raw/edge-feat.csv.gz, one row per edge line: noise from --seed plus the ends' classes), as ogbn-proteins has; 0 = none")
	fs.BoolVar(&o.NoNodeFeat, "no-node-feat", false, "leave raw/node-feat.csv.gz out (with --edge-feat-dim: an ogbn-proteins-shaped graph, whose node features partition --node-feat from-edges:mean makes)")
	fs.BoolVar(&g.hetero, "hetero", false, "generate an ogbn-mag-shaped heterogeneous graph (paper/author/institution/field_of_study) instead")
	h := &g.h
	fs.Float64Var(&g.scale, "scale", 1, "--hetero: size relative to ogbn-mag (1 = 736,389 papers, ~21 M edges); the count flags below override it")
	fs.Int64Var(&h.Papers, "papers", 0, "--hetero: papers (0 = scale x 736,389)")
	fs.Int64Var(&h.Authors, "authors", 0, "--hetero: authors (0 = scale x 1,134,649)")
	fs.Int64Var(&h.Institutions, "institutions", 0, "--hetero: institutions (0 = scale x 8,740)")
	fs.Int64Var(&h.Fields, "fields", 0, "--hetero: fields of study (0 = scale x 59,965)")
	fs.Int64Var(&h.Cites, "cites", 0, "--hetero: paper___cites___paper edges (0 = scale x 5,416,271)")
	fs.Int64Var(&h.Writes, "writes", 0, "--hetero: author___writes___paper edges (0 = scale x 7,145,660)")
	fs.Int64Var(&h.Affiliations, "affiliations", 0, "--hetero: author___affiliated_with___institution edges (0 = scale x 1,043,998)")
	fs.Int64Var(&h.Topics, "topics", 0, "--hetero: paper___has_topic___field_of_study edges (0 = scale x 7,505,078)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: mpignn gen --out DIR [--nodes N --avg-degree D --classes C --feat-dim F --seed S]\n"+
			"                  [--train-frac F --valid-frac F | --train N --valid N --test N]\n"+
			"       mpignn gen --hetero --out DIR [--scale S --papers N --authors N --institutions N --fields N\n"+
			"                  --cites M --writes M --affiliations M --topics M --classes C --feat-dim F --seed S]\n"+
			"       [mpirun -n P] mpignn gen --format chunked [--hetero] --out DIR [--chunk-nodes N --chunk-edges M] [flags above]\n"+
			"Writes DIR/raw/*.csv.gz and DIR/split/%s/{train,valid,test}.csv.gz (with --hetero OGB's heterogeneous\n"+
			"layout, ogbn-mag's: raw/num-node-dict.csv.gz, raw/relations/<src>___<rel>___<dst>/, split/%s/paper/).\n"+
			"With --hetero, --classes, --feat-dim, --homophily, --feat-sep and --power-law default to %d, %d, %g, %g, %g.\n"+
			"With --format chunked: DIR/metadata.json, DIR/edges/*.npy, DIR/node_data/<type>/*.npy (DistDGL's chunked format,\n"+
			"what partition --data and train --data read with all ranks), the same bytes on any number of ranks.\n",
			graph.GenSplitName, graph.GenSplitName, dh.Classes, dh.FeatDim, dh.Homophily, dh.FeatSep, dh.PowerLaw)
		printFlags(fs)
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, flagMistake(fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	g.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { g.set[f.Name] = true })
	return g, nil
}

// check refuses flags that do not go together and completes the options
// of the graph asked for: the heterogeneous one (heteroOptions), or the
// homogeneous one, where a typed 0 of --homophily or --feat-sep means none
// (a control graph), which a negligible positive value gives, since zero
// is the library's "default". What the values themselves may be is the
// generator's to say (graph.GenOptions.Validate, at its door).
func (g *genConfig) check() error {
	if g.out == "" {
		return errors.New("--out DIR is required")
	}
	if g.targetsFlag != "" {
		kind, k, ok := strings.Cut(g.targetsFlag, ":")
		n, err := strconv.Atoi(k)
		switch {
		case !ok || err != nil || n < 1 || (kind != graph.TargetsMultilabel && kind != graph.TargetsRegression):
			return fmt.Errorf("--targets %s: want multilabel:K or regression:K with K >= 1", g.targetsFlag)
		case g.hetero || g.format != genFormatOGB:
			return fmt.Errorf("--targets is written in the homogeneous OGB layout only (not with --hetero or --format %s)", genFormatChunked)
		}
		g.targets = genTargets{kind: kind, k: n}
	}
	if g.species != 0 && (g.hetero || g.format != genFormatOGB) {
		return fmt.Errorf("--species is written in the homogeneous OGB layout only (not with --hetero or --format %s)", genFormatChunked)
	}
	if g.edgeLabelsFlag != "" {
		kind, k, ok := strings.Cut(g.edgeLabelsFlag, ":")
		n, err := strconv.Atoi(k)
		switch {
		case !ok || err != nil || n < 1 || (kind != graph.EdgeLabelsClasses && kind != graph.EdgeLabelsRegression):
			return fmt.Errorf("--edge-labels %s: want classes:C (C >= 2) or regression:K (K >= 1)", g.edgeLabelsFlag)
		case kind == graph.EdgeLabelsClasses && n < 2:
			return fmt.Errorf("--edge-labels %s: want at least 2 classes", g.edgeLabelsFlag)
		case g.hetero || g.format != genFormatOGB:
			return fmt.Errorf("--edge-labels is written in the homogeneous OGB layout only (not with --hetero or --format %s)", genFormatChunked)
		}
		g.targets.edgeKind, g.targets.edgeK = kind, n
	}
	switch g.format {
	case genFormatOGB:
		for _, name := range []string{"chunk-nodes", "chunk-edges"} {
			if g.set[name] {
				return fmt.Errorf("--%s needs --format %s", name, genFormatChunked)
			}
		}
	case genFormatChunked:
		if g.chunkNodes < 1 || g.chunkEdges < 1 {
			// Zero means the default to chunkgen, not on the command line.
			return fmt.Errorf("--chunk-nodes %d and --chunk-edges %d must be positive", g.chunkNodes, g.chunkEdges)
		}
	default:
		return fmt.Errorf("--format %q: want %s or %s", g.format, genFormatOGB, genFormatChunked)
	}
	if (g.set["edge-feat-dim"] || g.set["no-node-feat"]) && (g.hetero || g.format == genFormatChunked) {
		// The chunked format and the heterogeneous writer carry no edge
		// features yet (nor do the readers of those layouts).
		return errors.New("--edge-feat-dim and --no-node-feat: for --format ogb homogeneous graphs only")
	}
	if g.hetero {
		return g.heteroOptions()
	}
	for _, name := range []string{"scale", "papers", "authors", "institutions", "fields", "cites", "writes", "affiliations", "topics"} {
		if g.set[name] {
			return fmt.Errorf("--%s needs --hetero", name)
		}
	}
	o := &g.o
	if (o.Train > 0 || o.Valid > 0 || o.Test > 0) && (o.TrainFrac > 0 || o.ValidFrac > 0) {
		return errors.New("give split sizes either as counts (--train/--valid/--test) or as fractions (--train-frac/--valid-frac), not both")
	}
	if g.set["homophily"] && o.Homophily == 0 {
		o.Homophily = 1e-12
	}
	if g.set["feat-sep"] && o.FeatSep == 0 {
		o.FeatSep = 1e-12
	}
	return nil
}

// heteroOptions checks the flags of --hetero and fills g.h: the counts
// scaled from ogbn-mag where not given, and the flags shared with the
// homogeneous graph only where given (their defaults differ).
func (g *genConfig) heteroOptions() error {
	for _, name := range []string{"nodes", "avg-degree", "train", "valid", "test"} {
		if g.set[name] {
			return fmt.Errorf("--%s is for homogeneous graphs; with --hetero give --scale or --papers/--authors/--institutions/--fields and --cites/--writes/--affiliations/--topics", name)
		}
	}
	if !(g.scale > 0) {
		return fmt.Errorf("--scale %v must be positive", g.scale)
	}
	h, o := &g.h, &g.o
	m := graph.MagGenOptions(g.scale)
	for _, p := range []struct{ v, def *int64 }{
		{&h.Papers, &m.Papers}, {&h.Authors, &m.Authors}, {&h.Institutions, &m.Institutions}, {&h.Fields, &m.Fields},
		{&h.Cites, &m.Cites}, {&h.Writes, &m.Writes}, {&h.Affiliations, &m.Affiliations}, {&h.Topics, &m.Topics},
	} {
		if *p.v < 0 {
			return fmt.Errorf("a count flag is %d; counts must be positive (0 = scaled ogbn-mag)", *p.v)
		}
		if *p.v == 0 {
			*p.v = *p.def
		}
	}
	h.Seed, h.Workers = o.Seed, o.Workers
	h.EdgeTime, h.NodeTime = o.EdgeTime, o.NodeTime
	if g.set["classes"] {
		h.Classes = o.Classes
	}
	if g.set["feat-dim"] {
		h.FeatDim = o.FeatDim
	}
	if g.set["homophily"] {
		h.Homophily = max(o.Homophily, 1e-12) // explicit 0: none
	}
	if g.set["feat-sep"] {
		h.FeatSep = max(o.FeatSep, 1e-12)
	}
	if g.set["power-law"] {
		h.PowerLaw = o.PowerLaw
	}
	if g.set["train-frac"] || g.set["valid-frac"] {
		h.TrainFrac, h.ValidFrac = o.TrainFrac, o.ValidFrac
	}
	return nil
}

// runGenOGB generates the homogeneous graph of o and writes it in the OGB
// raw layout.
// genTargets are the real targets --targets asks for (kind "" for none).
type genTargets struct {
	kind string
	k    int
	// edgeKind ("" for none) and edgeK: the edge labels of --edge-labels.
	edgeKind string
	edgeK    int
}

func runGenOGB(o graph.GenOptions, out string, targets genTargets, species int) error {
	// Refuse sizes that cannot fit before allocating: the runtime's out of
	// memory is a crash with a trace, not an error.
	need, err := graph.GenMemory(o)
	if err != nil {
		return err
	}
	if avail, ok := osx.FitsMemory(need); !ok {
		return fmt.Errorf("--nodes %d --feat-dim %d --avg-degree %v need ~%s of memory but this machine has %s available; lower them",
			o.Nodes, o.FeatDim, o.AvgDegree, osx.FormatBytes(need), osx.FormatBytes(float64(avail)))
	}
	// SIGINT/SIGTERM (Ctrl-C, scancel, a Slurm time limit) remove the
	// half-written dataset and exit 130/143; nothing exists before it.
	cleanup := tempout.NewCleanup("mpignn gen")
	defer cleanup.Listen()()
	cleanup.Add(tempout.Own(out))
	t0 := time.Now()
	s, err := graph.Generate(o)
	if err != nil {
		return err
	}
	if targets.kind != "" {
		// The classes stay in s for the statistics printed below; the
		// label file gets the targets instead.
		if s.Data.Targets, err = graph.PlantedTargets(s.Data.Labels, o.Classes, targets.kind, targets.k, o.Seed); err != nil {
			return err
		}
	}
	if species != 0 {
		// Beside the random split, so that the statistics below (taken
		// on it) still hold; the partitioner's --split picks either.
		sp, _, err := graph.SpeciesSplit(o.Nodes, species)
		if err != nil {
			return fmt.Errorf("--species: %w", err)
		}
		s.Data.Splits[graph.SpeciesSplitName] = sp
	}
	if targets.edgeKind != "" {
		// The lines WriteSynthetic writes: each pair as (u,v) then (v,u).
		src, dst := make([]int64, 2*len(s.Pairs)), make([]int64, 2*len(s.Pairs))
		for i, p := range s.Pairs {
			u, v := int64(p>>32), int64(p&0xffffffff)
			src[2*i], dst[2*i], src[2*i+1], dst[2*i+1] = u, v, v, u
		}
		if s.Data.EdgeTargets, err = graph.PlantedEdgeTargets(src, dst, s.Data.Labels, o.Classes, targets.edgeKind, targets.edgeK, o.Seed); err != nil {
			return err
		}
	}
	tGen := time.Since(t0)
	if err := graph.WriteSynthetic(out, s); err != nil {
		return err
	}
	st, so := s.Stats, s.Opt
	fmt.Printf("wrote %s: %d nodes, %d undirected edges (%d edge lines), %d classes, dim %d, split %q %d/%d/%d\n",
		out, so.Nodes, st.Edges, 2*st.Edges, so.Classes, so.FeatDim, graph.GenSplitName, so.Train, so.Valid, so.Test)
	fmt.Printf("edge homophily %.4f, max degree %d\n", st.EdgeHomophily, st.MaxDegree)
	if so.EdgeFeatDim > 0 || so.NoNodeFeat {
		fmt.Printf("edge features %d per edge line; node features written: %v\n", so.EdgeFeatDim, !so.NoNodeFeat)
	}
	fmt.Printf("planted accuracy ceiling (%d test nodes): features-only %.4f, features+neighbour labels %.4f\n",
		st.EvalNodes, st.FeatureOnlyAcc, st.OracleAcc)
	fmt.Printf("time: generate %.1fs, write %.1fs\n", tGen.Seconds(), (time.Since(t0) - tGen).Seconds())
	return nil
}

// runGenHetero generates and writes the ogbn-mag-shaped graph of o.
func runGenHetero(o graph.HeteroGenOptions, out string) error {
	if err := checkGenOut(out); err != nil {
		return err
	}
	need, err := graph.HeteroGenMemory(o)
	if err != nil {
		return err
	}
	if avail, ok := osx.FitsMemory(need); !ok {
		return fmt.Errorf("--hetero with %d papers, %d authors and %d edges needs ~%s of memory but this machine has %s available; lower --scale",
			o.Papers, o.Authors, o.Cites+o.Writes+o.Affiliations+o.Topics, osx.FormatBytes(need), osx.FormatBytes(float64(avail)))
	}
	cleanup := tempout.NewCleanup("mpignn gen")
	defer cleanup.Listen()()
	cleanup.Add(tempout.Own(out))
	t0 := time.Now()
	d, st, err := graph.GenerateHeteroStats(o)
	if err != nil {
		return err
	}
	tGen := time.Since(t0)
	if err := graph.WriteHetero(out, d); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "README.md"), []byte(graph.DescribeHetero(o, st)), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	s := d.Schema
	var types, rels []string
	var edges int64
	for t, ty := range s.NodeTypes {
		types = append(types, fmt.Sprintf("%s %d", ty, s.Count(t)))
	}
	for _, r := range s.Relations {
		rels = append(rels, fmt.Sprintf("%s %d", r.Name, st.Edges[r.String()]))
		edges += st.Edges[r.String()]
	}
	sp := d.Splits[graph.GenSplitName][graph.TypePaper]
	fmt.Printf("wrote %s: hetero, %d nodes (%s), %d edges (%s), %d classes, paper dim %d, split %q %d/%d/%d\n",
		out, s.NumNodes(), strings.Join(types, ", "), edges, strings.Join(rels, ", "), d.NumClasses[graph.TypePaper],
		d.Feat[graph.TypePaper].Dim, graph.GenSplitName, len(sp.Train), len(sp.Valid), len(sp.Test))
	fmt.Printf("planted accuracy ceiling (%d test papers): features-only %.4f, features+neighbour communities %.4f\n",
		st.EvalNodes, st.FeatureOnlyAcc, st.OracleAcc)
	fmt.Printf("time: generate %.1fs, write %.1fs\n", tGen.Seconds(), (time.Since(t0) - tGen).Seconds())
	return nil
}

// checkGenOut refuses an output directory that exists and is not empty.
func checkGenOut(out string) error {
	if _, err := os.Stat(out); err == nil {
		if ents, _ := os.ReadDir(out); len(ents) > 0 {
			return fmt.Errorf("%s exists and is not empty; refusing to overwrite", out)
		}
	}
	return nil
}
