package train

import (
	"fmt"
	"slices"
	"strings"
)

// archTable is a set of architectures to build models from.
type archTable []Arch

// builtinArchs returns the built-in architectures, one line each (the
// Arch is declared in the layer's own file). It is a function, not a
// package variable, so nothing can modify it at run time.
func builtinArchs() archTable {
	return archTable{
		sageArch(),
		gcnArch(),
		gatArch(),
		ginArch(),
		gineArch(),
		rgcnArch(),
		hsageArch(),
	}
}

// with returns the table extended by extra (consulted first, so an extra
// architecture may stand in for a built-in one of the same name).
func (t archTable) with(extra []Arch) archTable {
	if len(extra) == 0 {
		return t
	}
	return append(slices.Clone(archTable(extra)), t...)
}

// names returns the names of the table's homogeneous (hetero false) or
// heterogeneous architectures, in table order.
func (t archTable) names(hetero bool) []string {
	var names []string
	for _, a := range t {
		if a.Hetero == hetero && !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
	}
	return names
}

// edgeArchs names the architectures that read edge features, for a
// message ("none yet" when there are none).
func (t archTable) edgeArchs() []string {
	if names := t.edgeNames(); names != nil {
		return names
	}
	return []string{"none yet"}
}

// edgeNames returns the names of the architectures that read edge
// features (Arch.EdgeFeatures), in table order; nil if none does.
func (t archTable) edgeNames() []string {
	var names []string
	for _, a := range t {
		if a.EdgeFeatures && !slices.Contains(names, a.Name) {
			names = append(names, a.Name)
		}
	}
	return names
}

// lookup finds an architecture by name; "" means GraphSAGE, the only
// architecture before the registry existed.
func (t archTable) lookup(name string) (Arch, error) {
	if name == "" {
		name = ArchSAGE
	}
	for _, a := range t {
		if a.Name == name {
			return a, nil
		}
	}
	return Arch{}, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(append(t.names(false), t.names(true)...), ", "))
}

// Archs returns the names of the built-in homogeneous architectures (the
// ones a Config without Hetero can name).
func Archs() []string { return builtinArchs().names(false) }

// HeteroArchs returns the names of the built-in heterogeneous
// architectures (they need Config.Hetero and typed blocks).
func HeteroArchs() []string { return builtinArchs().names(true) }

// ArchDoc returns a one-line description of a built-in architecture (""
// if unknown).
func ArchDoc(name string) string {
	a, err := lookupArch(name)
	if err != nil {
		return ""
	}
	return a.Doc
}

// lookupArch finds a built-in architecture by name.
func lookupArch(name string) (Arch, error) { return builtinArchs().lookup(name) }

// EdgeArchs returns the names of the built-in architectures whose layers
// read edge features (Arch.EdgeFeatures: they take Config.EdgeDim), in
// table order; nil if none does.
func EdgeArchs() []string { return builtinArchs().edgeNames() }
