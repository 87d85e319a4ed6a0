package dtrain

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"mpignn/collectives"
	"mpignn/config"
	"mpignn/internal/osx"
	"mpignn/sample/dsample"
)

// EmbedConfig configures Embed and PredictLink. Every rank passes the same
// values.
type EmbedConfig struct {
	PartDir       string
	CheckpointDir string
	// Out is written by rank 0: for Embed the embeddings (.npy, or the
	// mpignn binary layout otherwise), for PredictLink a CSV of scores.
	Out string
	// Pairs (PredictLink) is a file of "src,dst" lines in original ids.
	Pairs string
	// Fanouts for inference; nil = the checkpoint's evaluation fanouts.
	// Full overrides them with the whole neighborhood.
	Fanouts []int
	Full    bool
	// Eval is the inference mode: EvalLayerwise (exact), EvalSampled (the
	// fanouts above), or "" for layer-wise unless Fanouts or Full are set.
	Eval  string
	Batch int // per-rank nodes per step
	// Final uses the final weights instead of the best-validation ones.
	Final bool
	// GCNNorm overrides a GCN checkpoint's first-layer normalisation
	// (train.Config.GCNNorm; "sym" evaluates GCNConv's, layer-wise only).
	GCNNorm string
	Store   dsample.StoreOptions
	// Note, if set, gets rank 0's notes on how the checkpoint's run is
	// reproduced (message passing over the valid edges too).
	Note io.Writer
}

// embedMagic starts the mpignn binary embedding layout: the magic, then
// little-endian uint64 rows and columns, then rows x cols float32 (row i is
// the node with original id i).
const embedMagic = "MPIGNNEMB1\x00\x00\x00\x00\x00\x00"

// openEmbedding opens the checkpoint's model over the partition
// (openInference) and computes the output rows of every node: layer-wise,
// over the train+valid graph when the run used it, or on sampled
// neighbourhoods. It is collective.
func openEmbedding(c *collectives.Comm, cfg EmbedConfig, what string) (*inference, error) {
	return openEmbeddingSpec(c, inferSpec{what: what, cfg: cfg})
}

// openEmbeddingSpec is openEmbedding with the inference spec s (its what
// and cfg set).
func openEmbeddingSpec(c *collectives.Comm, s inferSpec) (*inference, error) {
	cfg, what := s.cfg, s.what
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	inf, err := openInference(c, s)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			inf.close()
		}
	}()
	ck, part, typed := inf.ck, inf.part, inf.typed
	switch {
	case inf.validAdj != nil:
		cp := *part
		cp.Indptr, cp.Indices, cp.IndicesOrig = inf.validAdj[0], inf.validAdj[1], inf.validAdj[2]
		g, gerr := dsample.OpenGraphStore(c, &cp, dsample.GraphOptions{Transport: inf.store.Transport()})
		if gerr != nil {
			return nil, fmt.Errorf("%s: open train+valid graph: %w", what, gerr)
		}
		inf.emb, err = inferRows(inf.store, inf.model, typed, g, nil)
		if cerr := g.Close(); err == nil {
			err = cerr
		}
	case inf.mode == EvalLayerwise:
		inf.emb, err = inferRows(inf.store, inf.model, typed, nil, nil)
	default:
		inf.emb, err = inf.store.Embed(encoder{inf.model}, dsample.EmbedOptions{
			Width: ck.Model.Classes, Seed: ck.Seed, Fanouts: inf.fan, Replace: inf.info.Replace, Batch: cfg.Batch,
		})
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	ok = true
	return inf, nil
}

// embedChunk is the number of nodes whose rows travel to rank 0 per round.
const embedChunk = 1 << 16

// Embed writes the output rows of the checkpoint's model (for a link model
// the node embeddings its decoder scores; for a node model the class
// logits) for every node, by original id, to cfg.Out on rank 0: a .npy
// file (float32, shape nodes x width) if the name ends in .npy, else the
// mpignn binary layout (see embedMagic). Rows reach rank 0 in rounds of
// embedChunk original ids, so no rank holds more than a chunk of other
// ranks' rows. It returns the number of rows. It is collective.
func Embed(c *collectives.Comm, cfg EmbedConfig) (int64, error) {
	inf, err := openEmbedding(c, cfg, "embed")
	if err != nil {
		return 0, err
	}
	defer inf.close()
	n, w := inf.part.Meta.NumNodes, inf.emb.Width()
	// This rank's owned nodes in original-id order.
	own := make([]int, len(inf.part.Orig))
	for i := range own {
		own[i] = i
	}
	slices.SortFunc(own, func(a, b int) int { return int(inf.part.Orig[a] - inf.part.Orig[b]) })
	local := inf.emb.Local()
	var out bytes.Buffer
	if c.Rank() == 0 {
		writeEmbedHeader(&out, cfg.Out, n, w)
	}
	j := 0
	var ids []int64
	var rows []float32
	for lo := int64(0); lo < n; lo += embedChunk {
		hi := min(lo+embedChunk, n)
		ids, rows = ids[:0], rows[:0]
		for ; j < len(own) && inf.part.Orig[own[j]] < hi; j++ {
			ids = append(ids, inf.part.Orig[own[j]])
			rows = append(rows, local[own[j]*w:(own[j]+1)*w]...)
		}
		allIDs, _, err := collectives.Allgatherv(c, ids)
		if err != nil {
			return 0, fmt.Errorf("embed: %w", err)
		}
		allRows, _, err := collectives.Allgatherv(c, rows)
		if err != nil {
			return 0, fmt.Errorf("embed: %w", err)
		}
		if c.Rank() != 0 {
			continue
		}
		chunk := make([]float32, (hi-lo)*int64(w))
		for i, o := range allIDs {
			copy(chunk[(o-lo)*int64(w):], allRows[i*w:(i+1)*w])
		}
		binary.Write(&out, binary.LittleEndian, chunk)
	}
	var werr error
	if c.Rank() == 0 {
		werr = osx.WriteFileAtomic(cfg.Out, out.Bytes())
	}
	if err := collectives.Agree(c, werr); err != nil {
		return 0, fmt.Errorf("embed: %w", err)
	}
	return n, nil
}

// writeEmbedHeader writes the header of the embedding file format chosen by
// the output name.
func writeEmbedHeader(b *bytes.Buffer, name string, n int64, w int) {
	if strings.HasSuffix(name, ".npy") {
		// NPY version 1.0: magic, version, header length, then a Python
		// dict literal padded with spaces to a multiple of 64 bytes,
		// ending in a newline.
		hdr := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", n, w)
		pad := 64 - (10+len(hdr)+1)%64
		hdr += strings.Repeat(" ", pad%64) + "\n"
		b.WriteString("\x93NUMPY\x01\x00")
		binary.Write(b, binary.LittleEndian, uint16(len(hdr)))
		b.WriteString(hdr)
		return
	}
	b.WriteString(embedMagic)
	binary.Write(b, binary.LittleEndian, uint64(n))
	binary.Write(b, binary.LittleEndian, uint64(w))
}

// PredictLink scores the pairs of cfg.Pairs ("src,dst" per line, original
// ids, further columns ignored; blank lines and lines starting with '#' are skipped) with a link
// checkpoint and writes "src,dst,score,prob" per pair, in input order, to
// cfg.Out on rank 0. Each rank scores an equal slice of the pairs, reading
// both endpoints' embeddings with one fetch. It returns the number of
// pairs. It is collective.
func PredictLink(c *collectives.Comm, cfg EmbedConfig) (int64, error) {
	// Rank 0 reads the pairs and every rank gets them: a bad file is one
	// error on every rank, before anything is computed.
	var data []byte
	var rerr error
	if c.Rank() == 0 {
		var pairs []int64
		pairs, rerr = readPairs(cfg.Pairs)
		data = binary.LittleEndian.AppendUint64(nil, 0)[:0]
		for _, v := range pairs {
			data = binary.LittleEndian.AppendUint64(data, uint64(v))
		}
	}
	data, err := collectives.BcastBytes(c, 0, data, rerr)
	if err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	if len(data)%16 != 0 {
		return 0, fmt.Errorf("predict: received %d bytes of pairs from rank 0", len(data))
	}
	pairs := make([]int64, len(data)/8)
	for i := range pairs {
		pairs[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
	}
	inf, err := openEmbedding(c, cfg, "predict")
	if err != nil {
		return 0, err
	}
	defer inf.close()
	var lerr error
	switch {
	case inf.ck.Model.Decoder == "":
		lerr = config.Errorf("predict {Task} link: checkpoint %s holds a node-classification model (train with {Task} link)", cfg.CheckpointDir)
	case inf.ck.Model.IsEdge():
		lerr = config.Errorf("predict {Task} link: checkpoint %s holds an edge model (train {Task} edge): predict with {Task} edge", cfg.CheckpointDir)
	case inf.part.Link == nil:
		lerr = config.Errorf("predict {Task} link: partition %s has no link split (its id map is needed)", cfg.PartDir)
	}
	if err := collectives.Agree(c, lerr); err != nil {
		return 0, err
	}
	n := inf.part.Meta.NumNodes
	for i, v := range pairs {
		if v < 0 || v >= n {
			return 0, fmt.Errorf("predict: %s: pair %d has node %d outside [0,%d)", cfg.Pairs, i/2+1, v, n)
		}
	}
	// This rank's slice of the pairs; original ids become new ids through
	// the partition's distributed id map.
	np := int64(len(pairs) / 2)
	P, r := int64(c.Size()), int64(c.Rank())
	lo, hi := np*r/P, np*(r+1)/P
	o2n, err := dsample.OpenIDMap(inf.store)
	if err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	defer o2n.Close()
	ids, err := o2n.Map(pairs[2*lo : 2*hi])
	if err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	w := inf.emb.Width()
	rows := make([]float32, len(ids)*w)
	if err := inf.emb.Fetch(ids, rows); err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	hu := make([]float32, (hi-lo)*int64(w))
	hv := make([]float32, len(hu))
	for i := range hi - lo {
		copy(hu[i*int64(w):], rows[2*i*int64(w):(2*i+1)*int64(w)])
		copy(hv[i*int64(w):], rows[(2*i+1)*int64(w):(2*i+2)*int64(w)])
	}
	scores := make([]float32, hi-lo)
	lerr = inf.model.ScorePairs(hu, hv, scores)
	if err := collectives.Agree(c, lerr); err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	all, _, err := collectives.Allgatherv(c, scores)
	if err != nil {
		return 0, fmt.Errorf("predict: %w", err)
	}
	var werr error
	if c.Rank() == 0 {
		werr = writePairScores(cfg.Out, pairs, all)
	}
	if err := collectives.Agree(c, werr); err != nil {
		return 0, err
	}
	return np, nil
}

// readPairs reads "src,dst" lines (original ids).
func readPairs(path string) ([]int64, error) {
	if path == "" {
		return nil, config.Errorf("no {Pairs} file")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err // names the path
	}
	var pairs []int64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' {
			continue
		}
		a, b, ok := strings.Cut(t, ",")
		b, _, _ = strings.Cut(b, ",") // columns after dst (inspect --link-pairs's kind,id) are the user's
		u, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
		v, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		if !ok || err1 != nil || err2 != nil {
			if line == 1 && (err1 != nil || err2 != nil) && ok {
				continue // a header line such as "src,dst"
			}
			return nil, fmt.Errorf("%s:%d: want \"src,dst\" (two integer node ids), got %q", path, line, t)
		}
		pairs = append(pairs, u, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return pairs, nil
}

// writePairScores writes src,dst,score,prob lines via osx.WriteFileAtomic.
func writePairScores(path string, pairs []int64, scores []float32) error {
	var buf bytes.Buffer
	buf.WriteString("src,dst,score,prob\n")
	var line []byte
	for i, s := range scores {
		line = strconv.AppendInt(line[:0], pairs[2*i], 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, pairs[2*i+1], 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, float64(s), 'g', 8, 32)
		line = append(line, ',')
		line = strconv.AppendFloat(line, 1/(1+math.Exp(-float64(s))), 'g', 8, 64)
		line = append(line, '\n')
		buf.Write(line)
	}
	if err := osx.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("predict: %w", err)
	}
	return nil
}
