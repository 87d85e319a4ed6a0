package partition

import "mpignn/config"

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
	if o.Link != nil {
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
