package graph

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
)

// Validate reports read options ReadOGB cannot read with: a negative
// NumClasses, or a split name that is not one directory name under split/
// (a path would read outside the dataset). ReadOGB calls it.
func (o ReadOptions) Validate() error {
	if o.NumClasses < 0 {
		return fmt.Errorf("read options: NumClasses %d must not be negative (0 infers it)", o.NumClasses)
	}
	switch o.Labels {
	case LabelsAuto, LabelsClasses, LabelsReal:
	default:
		return fmt.Errorf("read options: Labels %q: want %q, %q or empty (by the label file's width)", o.Labels, LabelsClasses, LabelsReal)
	}
	if o.NumClasses > 0 && o.Labels == LabelsReal {
		return fmt.Errorf("read options: NumClasses %d applies to class labels, not real targets", o.NumClasses)
	}
	if err := checkSplitNames("Splits", o.Splits); err != nil {
		return err
	}
	if err := CheckNodeFeatFrom(o.NodeFeatFromEdges); err != nil {
		return fmt.Errorf("read options: NodeFeatFromEdges: %w", err)
	}
	if err := checkSplitNames("LinkSplits", o.LinkSplits); err != nil {
		return err
	}
	for _, name := range o.LinkSplits {
		if slices.Contains(o.Splits, name) {
			return fmt.Errorf("read options: split %q is in Splits and LinkSplits: a directory is a node split or a link split", name)
		}
	}
	return nil
}

// Validate reports read options ReadOGBHetero cannot read with: split
// names as ReadOptions.Validate, and NoReverse without Reverse (it would
// have no effect). Which relations NoReverse names is the dataset's to say
// (PlanRelations). ReadOGBHetero calls it.
func (o HeteroReadOptions) Validate() error {
	if err := checkSplitNames("Splits", o.Splits); err != nil {
		return err
	}
	if len(o.NoReverse) > 0 && !o.Reverse {
		return fmt.Errorf("read options: NoReverse %v without Reverse has no effect", o.NoReverse)
	}
	if len(o.EdgeFeat) > 0 && o.Time {
		return fmt.Errorf("read options: relation edge features (EdgeFeat) with Time: not supported yet")
	}
	return checkEdgeAttrNames(o.EdgeFeat)
}

// Validate reports conversion options ConvertToChunked cannot convert
// with: a negative chunk size (0 is the default). ConvertToChunked calls
// it.
func (o ConvertOptions) Validate() error {
	if o.ChunkNodes < 0 || o.ChunkEdges < 0 {
		return fmt.Errorf("convert options: chunk sizes %d nodes and %d edges must not be negative (0 = the default)", o.ChunkNodes, o.ChunkEdges)
	}
	switch o.EdgeLabels {
	case LabelsAuto, LabelsClasses, LabelsReal:
	default:
		return fmt.Errorf("convert options: EdgeLabels %q: want %q, %q or empty (by the label file's width)", o.EdgeLabels, LabelsClasses, LabelsReal)
	}
	return nil
}

// Validate reports download options Download cannot fetch with: a URL
// that is not an absolute http(s) address. Download calls it.
func (o DownloadOptions) Validate() error {
	if o.URL == "" {
		return nil
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return fmt.Errorf("download options: URL %q: %w", o.URL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("download options: URL %q: want an http:// or https:// address", o.URL)
	}
	return nil
}

// checkSplitNames refuses a split name that is empty or not a single
// directory name.
func checkSplitNames(field string, names []string) error {
	for _, name := range names {
		if name == "" || name == "." || name == ".." || name != filepath.Base(name) {
			return fmt.Errorf("read options: %s names %q, want the name of a directory under split/", field, name)
		}
	}
	return nil
}
