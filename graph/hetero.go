package graph

import (
	"fmt"
	"sort"
	"strings"
)

// RelationSep separates the parts of a canonical relation name, as in OGB's
// relations/<src>___<rel>___<dst>/ directories.
const RelationSep = "___"

// ReversePrefix names the reverse of a relation added on load, as PyG's
// ToUndirected does: writes -> rev_writes.
const ReversePrefix = "rev_"

// Relation is one edge type of a heterogeneous graph: edges go from nodes of
// type Src to nodes of type Dst.
type Relation struct {
	Src, Name, Dst string
}

// String returns the canonical name src___name___dst.
func (r Relation) String() string { return r.Src + RelationSep + r.Name + RelationSep + r.Dst }

// Reverse returns the relation with source and destination swapped and the
// name prefixed by ReversePrefix.
func (r Relation) Reverse() Relation {
	return Relation{Src: r.Dst, Name: ReversePrefix + r.Name, Dst: r.Src}
}

// ParseRelation parses a canonical name src___name___dst.
func ParseRelation(s string) (Relation, error) {
	parts := strings.Split(s, RelationSep)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Relation{}, fmt.Errorf("relation %q: want src%sname%sdst", s, RelationSep, RelationSep)
	}
	return Relation{Src: parts[0], Name: parts[1], Dst: parts[2]}, nil
}

// Schema is the type structure of a heterogeneous graph and the map between
// typed ids and the homogenized id space that partitions, samplers and
// models share.
//
// Node types are sorted by name; type t's node i (its id in the dataset's
// files) has the homogenized ORIGINAL id NodeOrig[t]+i, so original ids are
// unique across types, and the type of an original id is found by binary
// search. Relations are sorted by canonical name; their index r is the edge
// type everywhere (relation rows v*R+r of an in-adjacency, Block.Etype).
type Schema struct {
	NodeTypes []string
	NodeOrig  []int64 // len(NodeTypes)+1 offsets; NodeOrig[t+1]-NodeOrig[t] nodes of type t
	Relations []Relation
}

// NewSchema builds a Schema from per-type node counts and relations (any
// order; both are sorted here). Every relation's types must be known and
// relation names distinct.
func NewSchema(counts map[string]int64, rels []Relation) (*Schema, error) {
	s := &Schema{}
	for t := range counts {
		s.NodeTypes = append(s.NodeTypes, t)
	}
	sort.Strings(s.NodeTypes)
	s.NodeOrig = make([]int64, len(s.NodeTypes)+1)
	for i, t := range s.NodeTypes {
		if counts[t] < 0 {
			return nil, fmt.Errorf("schema: node type %q has %d nodes", t, counts[t])
		}
		s.NodeOrig[i+1] = s.NodeOrig[i] + counts[t]
	}
	s.Relations = append([]Relation(nil), rels...)
	sort.Slice(s.Relations, func(i, j int) bool { return s.Relations[i].String() < s.Relations[j].String() })
	for i, r := range s.Relations {
		if s.TypeIndex(r.Src) < 0 || s.TypeIndex(r.Dst) < 0 {
			return nil, fmt.Errorf("schema: relation %s names an unknown node type", r)
		}
		if i > 0 && s.Relations[i-1] == r {
			return nil, fmt.Errorf("schema: relation %s appears twice", r)
		}
	}
	return s, nil
}

// NumTypes returns the number of node types.
func (s *Schema) NumTypes() int { return len(s.NodeTypes) }

// NumRels returns the number of relations R.
func (s *Schema) NumRels() int { return len(s.Relations) }

// NumNodes returns the number of nodes of all types.
func (s *Schema) NumNodes() int64 { return s.NodeOrig[len(s.NodeOrig)-1] }

// Count returns the number of nodes of type t.
func (s *Schema) Count(t int) int64 { return s.NodeOrig[t+1] - s.NodeOrig[t] }

// TypeIndex returns the index of node type name, or -1.
func (s *Schema) TypeIndex(name string) int {
	i := sort.SearchStrings(s.NodeTypes, name)
	if i < len(s.NodeTypes) && s.NodeTypes[i] == name {
		return i
	}
	return -1
}

// RelIndex returns the index of the relation with canonical name name, or
// -1.
func (s *Schema) RelIndex(name string) int {
	i := sort.Search(len(s.Relations), func(i int) bool { return s.Relations[i].String() >= name })
	if i < len(s.Relations) && s.Relations[i].String() == name {
		return i
	}
	return -1
}

// SrcType and DstType return the node type indices of relation r's ends.
func (s *Schema) SrcType(r int) int { return s.TypeIndex(s.Relations[r].Src) }

// DstType returns the node type index of relation r's destinations.
func (s *Schema) DstType(r int) int { return s.TypeIndex(s.Relations[r].Dst) }

// TypeOf returns the node type of a homogenized original id.
func (s *Schema) TypeOf(orig int64) int {
	return sort.Search(len(s.NodeTypes), func(t int) bool { return s.NodeOrig[t+1] > orig })
}

// InRels returns, for every node type, the relations whose destination it
// is, ascending.
func (s *Schema) InRels() [][]int {
	out := make([][]int, len(s.NodeTypes))
	for r := range s.Relations {
		t := s.DstType(r)
		out[t] = append(out[t], r)
	}
	return out
}

// HeteroDataset is a heterogeneous graph in memory, in the homogenized id
// space of its Schema.
type HeteroDataset struct {
	Name   string
	Schema *Schema
	// In is the in-adjacency by relation rows: row v*R+r (v a homogenized
	// original id, R = Schema.NumRels()) lists the sources u of the edges
	// u -r-> v, as homogenized original ids, ascending and without
	// duplicates. It has NumNodes*R rows.
	In *CSR
	// Feat holds the features of each node type that has them, rows in the
	// type's own id order; types without features are absent.
	Feat map[string]*Features
	// Labels holds, for each labelled node type, one label per node of the
	// type (-1 where a node has none); NumClasses the class count per
	// labelled type.
	Labels     map[string][]int32
	NumClasses map[string]int
	// Splits holds node splits by split name, then node type; ids are the
	// type's own ids.
	Splits map[string]map[string]*Split
	// InTime (read with HeteroReadOptions.Time; nil when untimed) holds one
	// time per stored in-edge, aligned with In.Indices; every relation row
	// is then sorted by (time, source) strictly ascending, and a source may
	// appear several times in a row at different times.
	InTime []int64
	// NodeTime holds a node time per homogenized original id (nil when no
	// type has node times; 0 for the nodes of types without them).
	NodeTime []int64
	// TimeKind is TimeKindNode when every relation's edge times are its
	// source nodes' times, TimeKindEdge otherwise; "" untimed.
	TimeKind string
	// EdgeFeat (read with HeteroReadOptions.EdgeFeat; nil otherwise) holds
	// one row per stored in-edge, aligned with In.Indices: column c is the
	// edge's attribute EdgeFeatNames[c], 0 for a relation without it.
	EdgeFeat      *Features
	EdgeFeatNames []string
}

// NumNodes returns the number of nodes of all types.
func (d *HeteroDataset) NumNodes() int64 { return d.Schema.NumNodes() }
