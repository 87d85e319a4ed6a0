package graph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// LinkSet is one part (train, valid or test) of a link split: the edges
// src[i]->dst[i] in file order, with their times.
type LinkSet struct {
	Src, Dst []int64
	// Time is the third column of every row (nil when the split's rows have
	// only two columns). An OGB .pt split's time is its year.
	Time []int64
	// NegDst are negatives stored with the split, for ranking each edge
	// against its own (OGB's target_node_neg of ogbl-citation2): NegK
	// destinations per edge, edge i's at NegDst[i*NegK:(i+1)*NegK], each
	// paired with the edge's source. Nil (NegK 0) when the split stores
	// none: the CSV layout, training sets, the edge layout.
	NegDst []int64
	NegK   int
	// SharedNegSrc and SharedNegDst are negative pairs stored with the
	// split and shared by all its edges, for Hits@K (OGB's edge_neg of
	// ogbl-collab, -ppa, -ddi). Nil when the split stores none.
	SharedNegSrc, SharedNegDst []int64
}

// Len returns the number of edges.
func (s *LinkSet) Len() int { return len(s.Src) }

// LinkSplit is a link-prediction split read from split/<name>/.
type LinkSplit struct {
	Train, Valid, Test LinkSet
	// HasTime: every row had a time column (LinkSet.Time is filled).
	HasTime bool
}

// ReadLinkSplit reads the link split dir/split/<name>/{train,valid,test}.csv.gz
// whose rows are "src,dst[,time[,more columns]]" (node ids in [0,n); columns
// after the third, such as bitcoin-alpha's rating, are ignored). All rows
// of the three files must have the same shape: either all have a time or
// none does, so that HasTime means what it says. Any malformed row gives one
// error naming the file and line.
//
// A directory with OGB's {train,valid,test}.pt and no train.csv.gz is read
// as OGB ships its link splits, stored negatives included (see linkpt.go);
// any bad file gives one error naming it.
func ReadLinkSplit(dir, name string, n int64, workers int) (*LinkSplit, error) {
	if n <= 0 {
		return nil, fmt.Errorf("link split %q: node count %d must be positive", name, n)
	}
	if sd := filepath.Join(dir, "split", name); hasPTSplit(sd) {
		ls, err := readLinkSplitPT(sd, n)
		if err != nil {
			return nil, fmt.Errorf("link split %q: %w", name, err)
		}
		return ls, nil
	}
	return readLinkSplit(dir, name, n, n, false, workers)
}

// readLinkSplit reads split/<name>/ with sources in [0,nSrc) and
// destinations in [0,nDst). With optionalValid a missing valid.csv.gz
// gives an empty Valid set (GroupLens' u1..u5 splits ship train and test
// only).
func readLinkSplit(dir, name string, nSrc, nDst int64, optionalValid bool, workers int) (*LinkSplit, error) {
	sd := filepath.Join(dir, "split", name)
	if st, err := os.Stat(sd); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("link split %q: missing directory %s", name, sd)
	}
	ls := &LinkSplit{}
	cols := 0 // 2 or 3 once the first row is seen
	for _, p := range []struct {
		file string
		dst  *LinkSet
	}{{"train.csv.gz", &ls.Train}, {"valid.csv.gz", &ls.Valid}, {"test.csv.gz", &ls.Test}} {
		path := filepath.Join(sd, p.file)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if optionalValid && p.dst == &ls.Valid {
				*p.dst = LinkSet{Src: []int64{}, Dst: []int64{}, Time: []int64{}}
				continue
			}
			return nil, fmt.Errorf("link split %q: missing file %s", name, path)
		}
		set, c, err := readLinkRows(path, nSrc, nDst, cols, workers)
		if err != nil {
			return nil, fmt.Errorf("link split %q: %w", name, err)
		}
		if cols == 0 {
			cols = c
		}
		*p.dst = *set
	}
	ls.HasTime = cols == 3
	if !ls.HasTime {
		ls.Train.Time, ls.Valid.Time, ls.Test.Time = nil, nil, nil
	}
	return ls, nil
}

// linkRows is what one chunk of a link split file parsed to.
type linkRows struct {
	src, dst, time []int64
	cols           int
}

// readLinkRows parses one link split file. wantCols is 2 or 3 when an
// earlier file fixed the shape, 0 to let this file's first row decide; the
// shape found is returned.
func readLinkRows(path string, nSrc, nDst int64, wantCols, workers int) (*LinkSet, int, error) {
	var mu sync.Mutex
	chunks := map[int]*linkRows{}
	_, err := scanGzip(path, workers, func(c *textChunk) error {
		r := &linkRows{}
		err := forEachLine(c.data, c.firstLine, func(line []byte, idx int64) error {
			if len(line) == 0 {
				return &lineError{path, idx + 1, errors.New("empty line, want \"src,dst[,time,...]\"")}
			}
			u, v, t, k, err := parseLinkRow(line)
			if err != nil {
				return &lineError{path, idx + 1, err}
			}
			if u < 0 || u >= nSrc || v < 0 || v >= nDst {
				if nSrc == nDst {
					return &lineError{path, idx + 1, fmt.Errorf("edge %d,%d has an id outside [0,%d)", u, v, nSrc)}
				}
				return &lineError{path, idx + 1, fmt.Errorf("edge %d,%d has an id outside [0,%d) x [0,%d)", u, v, nSrc, nDst)}
			}
			if r.cols == 0 {
				r.cols = k
			} else if k != r.cols {
				return &lineError{path, idx + 1, fmt.Errorf("%s columns, earlier rows have %s", colName(k), colName(r.cols))}
			}
			r.src = append(r.src, u)
			r.dst = append(r.dst, v)
			r.time = append(r.time, t)
			return nil
		})
		mu.Lock()
		chunks[c.seq] = r
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	out := &LinkSet{Src: []int64{}, Dst: []int64{}, Time: []int64{}}
	cols := wantCols
	line := int64(0)
	for i := 0; i < len(chunks); i++ {
		r := chunks[i]
		if r.cols != 0 {
			if cols == 0 {
				cols = r.cols
			} else if r.cols != cols {
				return nil, 0, fmt.Errorf("%s line %d: %s columns, earlier rows have %s", path, line+1, colName(r.cols), colName(cols))
			}
		}
		line += int64(len(r.src))
		out.Src = append(out.Src, r.src...)
		out.Dst = append(out.Dst, r.dst...)
		out.Time = append(out.Time, r.time...)
	}
	return out, cols, nil
}

// colName says whether a row shape has a time column.
func colName(k int) string {
	if k == 3 {
		return "src,dst,time"
	}
	return "src,dst"
}

// parseLinkRow parses "src,dst", "src,dst,time" or "src,dst,time,..." and
// returns the shape: 2 without a time, 3 with one (extra columns ignored).
func parseLinkRow(line []byte) (src, dst, t int64, cols int, err error) {
	const want = "want \"src,dst[,time,...]\""
	src, rest, err := parseInt(line)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("bad source id (%v) in %q, %s", err, clip(line), want)
	}
	if len(rest) == 0 || rest[0] != ',' {
		return 0, 0, 0, 0, fmt.Errorf("%s, got %q", want, clip(line))
	}
	dst, rest, err = parseInt(rest[1:])
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("bad destination id (%v) in %q, %s", err, clip(line), want)
	}
	if len(rest) == 0 {
		return src, dst, 0, 2, nil
	}
	if rest[0] != ',' {
		return 0, 0, 0, 0, fmt.Errorf("%s, got %q", want, clip(line))
	}
	t, rest, err = parseInt(rest[1:])
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("bad time (%v) in %q, %s", err, clip(line), want)
	}
	if len(rest) != 0 && rest[0] != ',' {
		return 0, 0, 0, 0, fmt.Errorf("bad time in %q, %s", clip(line), want)
	}
	return src, dst, t, 3, nil
}
