package graph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"
)

// OGB's link splits as OGB ships them: split/<name>/{train,valid,test}.pt,
// each the torch.save of a dict of tensors (ogb/linkproppred/dataset.py's
// get_edge_split torch.loads them). They are read here in pure Go
// (gopickle reads both torch's zip format and the legacy one), so that
// mpignn evaluates on OGB's own positives and negatives and its figures
// compare with OGB's leaderboard. Two layouts exist:
//
//	ogbl-citation2   source_node, target_node: int64[N]
//	                 valid/test also target_node_neg: int64[N, K]
//	                 (K negative destinations per positive, same source)
//	ogbl-collab,     edge: int64[E, 2] (collab also weight, year: [E])
//	ogbl-ppa, -ddi   valid/test also edge_neg: int64[E', 2]
//	                 (negative pairs shared by every positive)
//
// Other keys (collab's weight) are ignored. year, when all three files
// have it, is the split's time column (LinkSet.Time: an integer time per
// event, as the third CSV column is); otherwise the split has no time.

// Keys of OGB's link split dicts.
const (
	ptSourceNode    = "source_node"
	ptTargetNode    = "target_node"
	ptTargetNodeNeg = "target_node_neg"
	ptEdge          = "edge"
	ptEdgeNeg       = "edge_neg"
	ptYear          = "year"
)

// hasPTSplit reports whether split directory sd holds OGB's .pt files and
// none of the CSV ones (the CSV layout wins when both exist, as before).
func hasPTSplit(sd string) bool {
	return !fileExists(filepath.Join(sd, "train.csv.gz")) && fileExists(filepath.Join(sd, "train.pt"))
}

// readLinkSplitPT reads split directory sd's {train,valid,test}.pt (ids in
// [0,n)). Every bad input is one error naming the file.
func readLinkSplitPT(sd string, n int64) (*LinkSplit, error) {
	ls := &LinkSplit{}
	layout := ""
	years := 0
	for _, p := range []struct {
		file string
		dst  *LinkSet
		eval bool
	}{{"train.pt", &ls.Train, false}, {"valid.pt", &ls.Valid, true}, {"test.pt", &ls.Test, true}} {
		path := filepath.Join(sd, p.file)
		if !fileExists(path) {
			return nil, fmt.Errorf("missing file %s (the split's train.pt is there: want OGB's train.pt, valid.pt and test.pt)", path)
		}
		set, lay, err := readLinkSetPT(path, n, p.eval)
		if err != nil {
			return nil, err
		}
		if layout == "" {
			layout = lay
		} else if lay != layout {
			return nil, fmt.Errorf("%s: %s layout, but train.pt has the %s one", path, lay, layout)
		}
		if set.Time != nil {
			years++
		}
		*p.dst = *set
	}
	if ls.Valid.NegK != ls.Test.NegK {
		return nil, fmt.Errorf("%s: %d negatives per positive, valid.pt has %d", filepath.Join(sd, "test.pt"), ls.Test.NegK, ls.Valid.NegK)
	}
	// year is a time only when every row has one (the CSV rule).
	ls.HasTime = years == 3
	if !ls.HasTime {
		ls.Train.Time, ls.Valid.Time, ls.Test.Time = nil, nil, nil
	}
	return ls, nil
}

// Layouts of an OGB link split file.
const (
	layoutNodes = "source_node/target_node (ogbl-citation2)"
	layoutEdges = "edge (ogbl-collab, -ppa, -ddi)"
)

// readLinkSetPT reads one OGB split file. eval: a valid or test file,
// which must hold its negatives.
func readLinkSetPT(path string, n int64, eval bool) (*LinkSet, string, error) {
	dict, err := loadPTDict(path)
	if err != nil {
		return nil, "", err
	}
	get := func(key string, dims int) (*ptTensor, error) {
		v, ok := dict[key]
		if !ok {
			return nil, fmt.Errorf("%s: missing key %q (has %s)", path, key, dictKeys(dict))
		}
		t, err := int64Tensor(v, dims)
		if err != nil {
			return nil, fmt.Errorf("%s: key %q: %w", path, key, err)
		}
		return t, nil
	}
	set := &LinkSet{}
	layout := ""
	var rows int
	switch _, nodes := dict[ptSourceNode]; {
	case nodes:
		layout = layoutNodes
		src, err := get(ptSourceNode, 1)
		if err != nil {
			return nil, "", err
		}
		dst, err := get(ptTargetNode, 1)
		if err != nil {
			return nil, "", err
		}
		if src.shape[0] != dst.shape[0] {
			return nil, "", fmt.Errorf("%s: %d source nodes but %d target nodes", path, src.shape[0], dst.shape[0])
		}
		set.Src, set.Dst, rows = src.data, dst.data, src.shape[0]
		if eval {
			neg, err := get(ptTargetNodeNeg, 2)
			if err != nil {
				return nil, "", err
			}
			if neg.shape[0] != rows || neg.shape[1] < 1 {
				return nil, "", fmt.Errorf("%s: key %q has shape %v, want [%d K] (K >= 1 negatives per positive)", path, ptTargetNodeNeg, neg.shape, rows)
			}
			set.NegDst, set.NegK = neg.data, neg.shape[1]
		}
	default:
		if _, ok := dict[ptEdge]; !ok {
			return nil, "", fmt.Errorf("%s: missing key %q or %q: not an OGB link split (has %s)", path, ptSourceNode, ptEdge, dictKeys(dict))
		}
		layout = layoutEdges
		e, err := get(ptEdge, 2)
		if err != nil {
			return nil, "", err
		}
		if e.shape[1] != 2 {
			return nil, "", fmt.Errorf("%s: key %q has shape %v, want [E 2]", path, ptEdge, e.shape)
		}
		rows = e.shape[0]
		set.Src, set.Dst = columns(e.data)
		if eval {
			neg, err := get(ptEdgeNeg, 2)
			if err != nil {
				return nil, "", err
			}
			if neg.shape[1] != 2 {
				return nil, "", fmt.Errorf("%s: key %q has shape %v, want [E' 2]", path, ptEdgeNeg, neg.shape)
			}
			set.SharedNegSrc, set.SharedNegDst = columns(neg.data)
		}
	}
	if v, ok := dict[ptYear]; ok {
		y, err := intTensor(v)
		if err != nil {
			return nil, "", fmt.Errorf("%s: key %q: %w", path, ptYear, err)
		}
		if len(y.shape) != 1 || y.shape[0] != rows {
			return nil, "", fmt.Errorf("%s: key %q has shape %v, want [%d]", path, ptYear, y.shape, rows)
		}
		set.Time = y.data
	}
	for _, c := range []struct {
		what string
		ids  []int64
	}{{"positive", set.Src}, {"positive", set.Dst}, {"negative", set.NegDst}, {"negative", set.SharedNegSrc}, {"negative", set.SharedNegDst}} {
		for i, v := range c.ids {
			if v < 0 || v >= n {
				return nil, "", fmt.Errorf("%s: %s node id %d (entry %d) outside [0,%d)", path, c.what, v, i, n)
			}
		}
	}
	return set, layout, nil
}

// columns splits the rows of an [E 2] array into its two columns.
func columns(pairs []int64) (a, b []int64) {
	k := len(pairs) / 2
	a, b = make([]int64, k), make([]int64, k)
	for i := range k {
		a[i], b[i] = pairs[2*i], pairs[2*i+1]
	}
	return a, b
}

// loadPTDict reads a torch.save file that holds a dict with string keys.
func loadPTDict(path string) (map[string]any, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	v, err := loadPT(path)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable torch.save file: %w", path, err)
	}
	out := map[string]any{}
	var entries []types.DictEntry
	switch d := v.(type) {
	case *types.Dict:
		entries = *d
	case *types.OrderedDict:
		for el := d.List.Front(); el != nil; el = el.Next() {
			if e, ok := el.Value.(*types.OrderedDictEntry); ok {
				entries = append(entries, types.DictEntry{Key: e.Key, Value: e.Value})
			}
		}
	default:
		return nil, fmt.Errorf("%s: holds a %s, want a dict of tensors (OGB's split layout)", path, pyTypeName(v))
	}
	for _, e := range entries {
		k, ok := e.Key.(string)
		if !ok {
			return nil, fmt.Errorf("%s: dict key %v is a %s, want strings", path, e.Key, pyTypeName(e.Key))
		}
		out[k] = e.Value
	}
	return out, nil
}

// loadPT is pytorch.Load, with a panic of the decoder on a malformed file
// turned into an error: bad input must never crash a run.
func loadPT(path string) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("malformed pickle (%v)", r)
		}
	}()
	return pytorch.Load(path)
}

// pyTypeName names the Python type an unpickled value came from.
func pyTypeName(v any) string {
	switch v.(type) {
	case *types.List:
		return "list"
	case *types.Tuple:
		return "tuple"
	case *types.Dict, *types.OrderedDict:
		return "dict"
	case *pytorch.Tensor:
		return "tensor"
	case string:
		return "str"
	case int, int64:
		return "int"
	case float64:
		return "float"
	case nil:
		return "None"
	}
	return fmt.Sprintf("%T", v)
}

// dictKeys lists the keys of d in sorted order for messages.
func dictKeys(d map[string]any) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return fmt.Sprintf("%q", keys)
}

// ptTensor is an integer tensor in row-major order.
type ptTensor struct {
	shape []int
	data  []int64
}

// int64Tensor returns v as an int64 tensor of dims dimensions: OGB stores
// node ids as torch.long, and any other dtype is refused rather than
// converted (it would mean the file is not OGB's).
func int64Tensor(v any, dims int) (*ptTensor, error) {
	t, ok := v.(*pytorch.Tensor)
	if !ok {
		return nil, fmt.Errorf("is a %s, want a tensor", pyTypeName(v))
	}
	if _, ok := t.Source.(*pytorch.LongStorage); !ok {
		return nil, fmt.Errorf("dtype %s, want int64 (torch.long)", storageDtype(t.Source))
	}
	if len(t.Size) != dims {
		return nil, fmt.Errorf("has %d dimensions %v, want %d", len(t.Size), t.Size, dims)
	}
	return intTensor(v)
}

// intTensor returns the integer tensor v (any integer dtype) in row-major
// order, following its strides (a transposed tensor is saved with its
// storage as is).
func intTensor(v any) (*ptTensor, error) {
	t, ok := v.(*pytorch.Tensor)
	if !ok {
		return nil, fmt.Errorf("is a %s, want a tensor", pyTypeName(v))
	}
	var at func(i int) int64
	var size int
	switch s := t.Source.(type) {
	case *pytorch.LongStorage:
		at, size = func(i int) int64 { return s.Data[i] }, len(s.Data)
	case *pytorch.IntStorage:
		at, size = func(i int) int64 { return int64(s.Data[i]) }, len(s.Data)
	case *pytorch.ShortStorage:
		at, size = func(i int) int64 { return int64(s.Data[i]) }, len(s.Data)
	case *pytorch.CharStorage:
		at, size = func(i int) int64 { return int64(s.Data[i]) }, len(s.Data)
	case *pytorch.ByteStorage:
		at, size = func(i int) int64 { return int64(s.Data[i]) }, len(s.Data)
	default:
		return nil, fmt.Errorf("dtype %s, want an integer tensor", storageDtype(t.Source))
	}
	if len(t.Stride) != len(t.Size) || t.StorageOffset < 0 {
		return nil, errors.New("malformed tensor (strides do not match its shape)")
	}
	count, last := 1, t.StorageOffset // element count; highest storage index reached
	for d, s := range t.Size {
		if s < 0 || t.Stride[d] < 0 {
			return nil, fmt.Errorf("malformed tensor (shape %v, strides %v)", t.Size, t.Stride)
		}
		if s == 0 {
			count = 0
			break
		}
		count *= s
		last += (s - 1) * t.Stride[d]
	}
	if count > 0 && last >= size {
		return nil, fmt.Errorf("malformed tensor: shape %v with strides %v reaches past its %d stored values", t.Size, t.Stride, size)
	}
	out := &ptTensor{shape: append([]int(nil), t.Size...)}
	if ls, ok := t.Source.(*pytorch.LongStorage); ok && t.StorageOffset == 0 && count == len(ls.Data) && rowMajor(t.Size, t.Stride) {
		// The common case (OGB's arrays are saved contiguous): use the
		// storage as it is rather than copy citation2's 86M negatives
		// per split.
		out.data = ls.Data
		return out, nil
	}
	out.data = make([]int64, count)
	if count == 0 {
		return out, nil
	}
	idx := make([]int, len(t.Size))
	off := t.StorageOffset
	for i := range count {
		out.data[i] = at(off)
		// Advance the multi-index (last dimension fastest).
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			off += t.Stride[d]
			if idx[d] < t.Size[d] {
				break
			}
			off -= idx[d] * t.Stride[d]
			idx[d] = 0
		}
	}
	return out, nil
}

// rowMajor reports whether strides are the contiguous row-major ones of
// size (dimensions of size 1 may have any stride).
func rowMajor(size, stride []int) bool {
	want := 1
	for d := len(size) - 1; d >= 0; d-- {
		if size[d] != 1 && stride[d] != want {
			return false
		}
		want *= size[d]
	}
	return true
}

// storageDtype names a storage's torch dtype for messages.
func storageDtype(s pytorch.StorageInterface) string {
	switch s.(type) {
	case *pytorch.LongStorage:
		return "int64"
	case *pytorch.IntStorage:
		return "int32"
	case *pytorch.ShortStorage:
		return "int16"
	case *pytorch.CharStorage:
		return "int8"
	case *pytorch.ByteStorage:
		return "uint8"
	case *pytorch.FloatStorage:
		return "float32"
	case *pytorch.DoubleStorage:
		return "float64"
	case *pytorch.HalfStorage:
		return "float16"
	}
	return fmt.Sprintf("%T", s)
}
