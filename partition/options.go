package partition

import (
	"mpignn/config"
	"mpignn/graph"
	"mpignn/internal/half"
)

// Validate reports options no partitioning can use, naming the field at
// fault (config.FieldError): an unknown Method or SparseFeatures mode,
// link options that do not validate (LinkOptions.Validate, under Link), a
// node Split given with a link split, or Link.Graph "all" without Time.
// What depends on the dataset (the split, features to store sparse) is
// checked when it is read.
func (o Options) Validate() error {
	if err := o.checkMethod(); err != nil {
		return err
	}
	if err := checkSparseMode(o.SparseFeatures); err != nil {
		return err
	}
	if err := o.validateEdgeFeat(); err != nil {
		return err
	}
	k, err := o.featKind()
	if err != nil {
		return err
	}
	if k.Half() && o.SparseFeatures == SparseOn {
		return errHalfSparse(k)
	}
	if o.Link != nil {
		if k.Half() {
			// The link loaders read Part.Feat's float32 rows themselves.
			return config.Errorf("{FeatDType} %s with a link split ({Link}): not supported yet (link partitions store float32 features)", k)
		}
		if err := config.In("Link", o.Link.Validate()); err != nil {
			return err
		}
		switch {
		case o.Split != "":
			// Node splits are not read for a link partition (a dataset's
			// split/ may hold link splits such as split/time).
			return config.Errorf("{Split} %q names a node split, which a link partition ({Link}) does not use", o.Split)
		case o.Link.Graph == LinkGraphAll && !o.Time:
			return errGraphNeedsTime()
		}
	}
	return nil
}

// checkMethod refuses a Method other than metis ("" too) and random.
func (o Options) checkMethod() error {
	switch o.Method {
	case "", MethodMetis, MethodRandom:
		return nil
	}
	return config.Errorf("{Method} %q: want %s or %s", o.Method, MethodMetis, MethodRandom)
}

// checkSparseMode refuses a SparseFeatures mode other than auto, on and
// off ("" too).
func checkSparseMode(mode string) error {
	switch mode {
	case "", SparseAuto, SparseOn, SparseOff:
		return nil
	}
	return config.Errorf("{SparseFeatures} %q: want %s, %s or %s", mode, SparseAuto, SparseOn, SparseOff)
}

// featKind parses FeatDType.
func (o Options) featKind() (half.Kind, error) {
	k, err := half.Parse(o.FeatDType)
	if err != nil {
		return k, config.Errorf("{FeatDType}: %v", err)
	}
	return k, nil
}

// ResolveSparse is UseSparse under the feature type o.FeatDType as well:
// a 2-byte type stores dense rows (the CSR values stay float32), so auto
// keeps the features dense and on is refused; heterogeneous typed features
// stay float32, so a 2-byte type is refused for them.
func (o Options) ResolveSparse(f *graph.Features, hetero, link bool) (bool, error) {
	k, err := o.featKind()
	if err != nil {
		return false, err
	}
	if k.Half() {
		switch {
		case hetero:
			return false, config.Errorf("{FeatDType} %s: heterogeneous partitions store their typed features as float32 (use fp32)", k)
		case o.SparseFeatures == SparseOn:
			return false, errHalfSparse(k)
		}
		return false, checkSparseMode(o.SparseFeatures)
	}
	return UseSparse(o.SparseFeatures, f, hetero, link)
}

// errHalfSparse refuses sparse rows with a 2-byte feature type.
func errHalfSparse(k half.Kind) error {
	return config.Errorf("{FeatDType} %s with {SparseFeatures} %s: sparse rows store float32 values (use %s or %s)", k, SparseOn, SparseAuto, SparseOff)
}
