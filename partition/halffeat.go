package partition

import (
	"fmt"
	"path/filepath"

	"mpignn/config"
	"mpignn/graph"
	"mpignn/internal/half"
)

// Features at half the bytes (Options.FeatDType, issue 43): feat.bin and
// halo_feat.bin hold bfloat16 or float16 arrays (dtype bytes 4 and 5 of
// the array header), Meta.FeatDType names the type, and Part.Feat16 and
// HaloFeat16 hold the loaded bits. The rows are rounded once, when the
// part is written; a reader widens them to float32 exactly.

// featDTypeName is what META records for kind: nothing for float32 (and for
// a dataset without features), so float32 partitions stay byte-identical
// to those of builds before the option.
func featDTypeName(kind half.Kind, dim int) string {
	if !kind.Half() || dim == 0 {
		return ""
	}
	return kind.String()
}

// FeatKind returns the type the node features are stored in (float32 for
// partitions written without Options.FeatDType).
func (m *Meta) FeatKind() half.Kind {
	k, _ := half.Parse(m.FeatDType) // validate refused any other name
	return k
}

// featArrayType is the array dtype of feat.bin and halo_feat.bin.
func (m *Meta) featArrayType() dtype {
	switch m.FeatKind() {
	case half.BF16:
		return dtBF16
	case half.FP16:
		return dtFP16
	}
	return dtFloat32
}

// validateFeatDType checks feat_dtype against the rest of META.
func (m *Meta) validateFeatDType() error {
	k, err := half.Parse(m.FeatDType)
	switch {
	case err != nil:
		return fmt.Errorf("feat_dtype: %w", err)
	case m.FeatDType == half.NameF32:
		return fmt.Errorf("feat_dtype %q: float32 partitions leave feat_dtype out", m.FeatDType)
	case k.Half() && (m.SparseFeat || m.Hetero != nil || m.FeatDim == 0):
		return fmt.Errorf("feat_dtype %s is set for a partition without dense homogeneous node features (feat_dim %d, sparse %v, hetero %v)", k, m.FeatDim, m.SparseFeat, m.Hetero != nil)
	}
	return nil
}

// CheckFeatures refuses features that kind cannot hold (half.Check: for
// fp16 a value that is not finite or beyond ±65504), naming the first such
// value by where(node), its column and the value, in one line.
func CheckFeatures(kind half.Kind, f *graph.Features, where func(node int64) string) error {
	if f == nil || f.Dim == 0 {
		return nil
	}
	i := half.Check(kind, f.Data)
	if i < 0 {
		return nil
	}
	v, c := int64(i/f.Dim), i%f.Dim
	return config.Errorf("{FeatDType} %s: %s, column %d: value %g is not finite or beyond float16's range (|x| <= %d)", kind, where(v), c, f.Data[i], half.MaxFP16)
}

// putFeat writes rows (float32, row-major, dim wide) as feature file name of
// part p in m's feature type, recording it in files. The writer's callers
// checked the values (CheckFeatures); a value that slipped through is
// still refused here, before the partition directory appears.
func putFeat(files map[string]FileInfo, aw *arrayWriter, pdir string, p int, name string, m *Meta, rows []float32) error {
	kind := m.FeatKind()
	if !kind.Half() {
		return putArray(files, aw, pdir, p, name, rows)
	}
	if i := half.Check(kind, rows); i >= 0 {
		return fmt.Errorf("partition: part %d %s: row %d, column %d: value %g does not fit %s", p, name, i/max(m.FeatDim, 1), i%max(m.FeatDim, 1), rows[i], kind)
	}
	bits := make([]uint16, len(rows))
	half.Narrow(kind, bits, rows)
	fi, err := writeArrayFileAs(aw, filepath.Join(pdir, name), bits, m.featArrayType())
	if err != nil {
		return err
	}
	files[partDir(p)+"/"+name] = fi
	return nil
}
