package partition

import (
	"fmt"

	"mpignn/config"
)

// Validate reports options no partitioning can use, naming the field at
// fault (config.FieldError): an unknown Method or SparseFeatures mode, or
// link options that do not check (LinkOptions.Check). What depends on the
// dataset (the split, features to store sparse) is checked when it is
// read.
func (o Options) Validate() error {
	if err := o.checkMethod(); err != nil {
		return err
	}
	if err := checkSparseMode(o.SparseFeatures); err != nil {
		return err
	}
	if o.Link != nil {
		if err := o.Link.Check(); err != nil {
			return fmt.Errorf("%w: %w", config.Errorf("{Link}"), err)
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
