package sample

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"mpignn/graph"
)

// MaxFanout bounds one hop's fanout: more would overflow the sampler's
// int32 block offsets long before it meant anything.
const MaxFanout = 1 << 30

// FanoutPlan is a fanout setting parsed once where it is typed (a command
// line's --fanout) and carried as it is to the sampler: one fanout per hop
// for every relation ("15,10"), or one list per relation ("cites=15,10;
// *=5,5"), which only a graph's schema resolves to relation indices
// (Resolve). Hop 0 is the hop from the seeds (PyG order).
type FanoutPlan struct {
	// Hops holds one fanout per hop (-1: all neighbours). Of a
	// per-relation plan it is the widest fanout of each hop over the
	// lists (-1 where one takes all, at least 1): what counts the layers
	// and sizes a run before the schema is known.
	Hops []int
	// Rels are the per-relation lists in the order given, the default "*"
	// among them; nil for one list for every relation.
	Rels []RelFanout
}

// RelFanout is one list of a per-relation FanoutPlan. Name is a canonical
// relation (src___rel___dst), a bare relation name that exactly one
// relation has, or "*": every relation not named.
type RelFanout struct {
	Name string
	Hops []int
}

// UniformPlan is the plan of one fanout list for every relation.
func UniformPlan(hops []int) FanoutPlan { return FanoutPlan{Hops: hops} }

// PerRelation reports whether the plan names relations, which only a
// heterogeneous graph can resolve.
func (p FanoutPlan) PerRelation() bool { return p.Rels != nil }

// ParseFanoutPlan parses a fanout setting: "15,10" (one list for all
// relations) or "paper___cites___paper=15,10;writes=5,5;*=2,1" (a list per
// relation, "*" the default of every relation not named; the first list
// fixes the depth). The result is valid (Validate). An empty s is the zero
// plan: the caller's default. Errors say which part of s is at fault and
// leave naming s to the caller (a flag, a field).
func ParseFanoutPlan(s string) (FanoutPlan, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return FanoutPlan{}, nil
	}
	if !strings.Contains(s, "=") {
		hops, err := parseFanoutList(s)
		if err != nil {
			return FanoutPlan{}, err
		}
		p := UniformPlan(hops)
		return p, p.Validate()
	}
	var p FanoutPlan
	for i, item := range strings.Split(s, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, list, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return FanoutPlan{}, fmt.Errorf("entry %d %q is not relation=fanouts", i, item)
		}
		hops, err := parseFanoutList(list)
		if err != nil {
			return FanoutPlan{}, fmt.Errorf("relation %s: %w", name, err)
		}
		for _, r := range p.Rels {
			if r.Name == name {
				if name == "*" {
					return FanoutPlan{}, errors.New("default * given twice")
				}
				return FanoutPlan{}, fmt.Errorf("relation %s given twice", name)
			}
		}
		p.Rels = append(p.Rels, RelFanout{Name: name, Hops: hops})
	}
	if len(p.Rels) == 0 {
		return FanoutPlan{}, errors.New("no relation fanouts")
	}
	p.Hops = widest(p.Rels)
	return p, p.Validate()
}

// parseFanoutList parses "15,10": integers only; Validate judges them.
func parseFanoutList(s string) ([]int, error) {
	parts := strings.Split(s, ",")
	out := make([]int, len(parts))
	for i, v := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		out[i] = n
	}
	return out, nil
}

// widest is one fanout per hop over the lists of rels: -1 where one takes
// all neighbours, else the largest, at least 1 (a hop of 0 everywhere
// still has its layer). All lists have the length of the first.
func widest(rels []RelFanout) []int {
	hops := make([]int, len(rels[0].Hops))
	for h := range hops {
		hops[h] = 1
	}
	for _, r := range rels {
		for h, n := range r.Hops {
			switch {
			case h >= len(hops):
			case n == -1 || hops[h] == -1:
				hops[h] = -1
			default:
				hops[h] = max(hops[h], n)
			}
		}
	}
	return hops
}

// Validate reports a plan no sampler can run: no hop, a hop of Hops that
// is neither -1 nor 1..MaxFanout, a relation list of another length than
// Hops or with a fanout that is not -1, 0 (none of the relation) or
// 1..MaxFanout, or Hops other than the lists' widest.
func (p FanoutPlan) Validate() error {
	if len(p.Hops) == 0 {
		return errors.New("needs at least one layer")
	}
	if err := CheckFanouts(p.Hops); err != nil {
		return err
	}
	if p.Rels == nil {
		return nil
	}
	for _, r := range p.Rels {
		if len(r.Hops) != len(p.Hops) {
			return fmt.Errorf("relation %s: %d fanouts, want %d (one per layer, as the first list)", r.Name, len(r.Hops), len(p.Hops))
		}
		for h, n := range r.Hops {
			if n < -1 || n > MaxFanout {
				return fmt.Errorf("relation %s: hop %d has fanout %d, want -1 (all), 0 (none) or a positive count", r.Name, h, n)
			}
		}
	}
	for h, n := range widest(p.Rels) {
		if p.Hops[h] != n {
			return fmt.Errorf("hop %d has fanout %d, but its widest relation list has %d", h, p.Hops[h], n)
		}
	}
	return nil
}

// CheckFanouts refuses a fanout list with a hop that is neither -1 (all
// neighbours) nor 1..MaxFanout, naming the hop ("layer", hop from the
// seeds first). It is the one rule for a plain fanout list.
func CheckFanouts(hops []int) error {
	for i, f := range hops {
		if f == 0 || f < -1 || f > MaxFanout {
			return fmt.Errorf("layer %d has fanout %d, want > 0 or -1 (all)", i, f)
		}
	}
	return nil
}

// Resolve returns the plan's fanouts for every relation of schema: a
// plain plan gives its list to every relation; a per-relation one each
// named relation its list and every other the default "*" (without one,
// every relation must be named: a relation silently left out would be a
// model that never sees it).
func (p FanoutPlan) Resolve(schema *graph.Schema) (RelFanouts, error) {
	if schema == nil {
		return nil, errors.New("no graph schema")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	R := schema.NumRels()
	if p.Rels == nil {
		return UniformRelFanouts(p.Hops, R), nil
	}
	perRel := make([][]int, R)
	var def []int
	for _, item := range p.Rels {
		if item.Name == "*" {
			def = item.Hops
			continue
		}
		r, err := findRelation(schema, item.Name)
		if err != nil {
			return nil, err
		}
		if perRel[r] != nil {
			return nil, fmt.Errorf("relation %s given twice", schema.Relations[r])
		}
		perRel[r] = item.Hops
	}
	f := make(RelFanouts, len(p.Hops))
	for h := range f {
		f[h] = make([]int, R)
	}
	for r, list := range perRel {
		if list == nil {
			if def == nil {
				return nil, fmt.Errorf("relation %s has no fanout (name it or add a default *=...)", schema.Relations[r])
			}
			list = def
		}
		for h, n := range list {
			f[h][r] = n
		}
	}
	return f, nil
}

// findRelation resolves a canonical relation name, or a bare name that
// exactly one relation has.
func findRelation(schema *graph.Schema, name string) (int, error) {
	if r := schema.RelIndex(name); r >= 0 {
		return r, nil
	}
	found := -1
	for r, rel := range schema.Relations {
		if rel.Name == name {
			if found >= 0 {
				return 0, fmt.Errorf("relation %s is ambiguous (%s, %s): use the canonical src___rel___dst name", name, schema.Relations[found], rel)
			}
			found = r
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("relation %s is not in the graph", name)
	}
	return found, nil
}
