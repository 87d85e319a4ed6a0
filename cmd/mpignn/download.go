package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"mpignn/graph"
	"mpignn/internal/tempout"
)

// runDownload implements `mpignn download NAME --root DIR`: fetch an OGB
// node or link dataset (resumable), verify it and unpack it into DIR/NAME in the
// raw layout. A rerun after success does nothing; a rerun after an
// interruption resumes the download.
func runDownload(args []string) error {
	fs := flag.NewFlagSet("download", flag.ContinueOnError)
	root := fs.String("root", "data", "directory that receives ROOT/NAME/{raw,split}")
	url := fs.String("url", "", "download from this address instead of the official OGB one (mirrors, tests)")
	keep := fs.Bool("keep-zip", false, "keep ROOT/NAME.zip after unpacking")
	quiet := fs.Bool("quiet", false, "print nothing but errors")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: mpignn download NAME [--root DIR] [--url URL] [--keep-zip]\n"+
			"NAME is ogbn-arxiv, ogbn-products, ogbn-papers100M (node property prediction),\n"+
			"ogbl-collab or ogbl-citation2 (link prediction: OGB's split in split/time/*.pt,\n"+
			"read by partition --link-split time, with OGB's own evaluation negatives).\n")
		printFlags(fs)
	}
	// Accept the name before or after the flags.
	var name string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
		if fs.NArg() > 1 {
			return fmt.Errorf("unexpected arguments %q", fs.Args()[1:])
		}
	} else if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if name == "" {
		fs.Usage()
		return errors.New("missing dataset NAME")
	}
	if !onRankZero("download", "a dataset is downloaded by one process") {
		return nil
	}
	opt := graph.DownloadOptions{URL: *url, KeepZip: *keep}
	if !*quiet {
		opt.Progress = os.Stdout
	}
	// SIGINT/SIGTERM remove the half-unpacked dataset directory and exit
	// 130/143. The partial download ROOT/NAME.zip.part is not registered: a
	// rerun resumes it, so it is kept like a finished ROOT/NAME.zip.
	cleanup := tempout.NewCleanup("mpignn download")
	defer cleanup.Listen()()
	if name == filepath.Base(name) {
		cleanup.Add(tempout.Own(filepath.Join(*root, name)))
	}
	_, err := graph.Download(context.Background(), name, *root, opt)
	return err
}
