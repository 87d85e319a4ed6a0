package graph

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// OGBURL returns the official download address of an OGB node-property
// or link-property dataset this project supports.
//
// The link datasets unpack to the same raw layout (raw/edge.csv.gz holds
// the training edges, raw/node-feat.csv.gz the features, no labels) plus
// OGB's link split split/time/{train,valid,test}.pt with its stored
// negatives, which ReadLinkSplit reads: partition them with --link-split
// time (ogbl-collab is undirected: add --undirected).
func OGBURL(name string) (string, error) {
	switch name {
	case "ogbn-arxiv", "ogbn-products", "ogbn-papers100M", "ogbn-proteins", "ogbn-mag":
		// The zips are named after the dataset without the "ogbn-" prefix
		// (OGB's download of ogbn-proteins fetches .../proteins.zip).
		// ogbn-proteins has 112 label columns (real targets: --task
		// multilabel), edge-feat.csv.gz and no node features (partition
		// --node-feat from-edges:mean); ogbn-mag is heterogeneous.
		return "http://snap.stanford.edu/ogb/data/nodeproppred/" + strings.TrimPrefix(name, "ogbn-") + ".zip", nil
	case "ogbl-collab":
		// OGB's master.csv: download_name collab.
		return "http://snap.stanford.edu/ogb/data/linkproppred/collab.zip", nil
	case "ogbl-citation2":
		// OGB's master.csv: download_name citation-v2 (version 2 of
		// ogbl-citation, with 1000 stored negatives per edge).
		return "http://snap.stanford.edu/ogb/data/linkproppred/citation-v2.zip", nil
	}
	return "", fmt.Errorf("unknown dataset %q (known: ogbn-arxiv, ogbn-products, ogbn-papers100M, ogbn-proteins, ogbn-mag, ogbl-collab, ogbl-citation2)", name)
}

// DownloadOptions control Download.
type DownloadOptions struct {
	URL      string       // overrides OGBURL(name), e.g. a mirror or a test server
	Client   *http.Client // nil = http.DefaultClient
	KeepZip  bool         // keep ROOT/NAME.zip after unpacking
	Progress io.Writer    // nil = quiet
}

// Download fetches dataset name into root/name in the OGB raw layout
// (raw/ and split/ directly under root/name) and returns that directory.
//
// It is resume-safe: the zip is fetched to root/name.zip.part, and a rerun
// after an interruption continues it with an HTTP Range request. A complete
// download is checked (length against the server's, zip central directory,
// and every member's CRC-32 while unpacking) and unpacked into a temporary
// directory that is renamed at the end. When root/name/raw already exists
// Download does nothing.
func Download(ctx context.Context, name, root string, opt DownloadOptions) (string, error) {
	if err := opt.Validate(); err != nil {
		return "", fmt.Errorf("download %s: %w", name, err)
	}
	url := opt.URL
	if url == "" {
		var err error
		if url, err = OGBURL(name); err != nil {
			return "", err
		}
	}
	if name == "" || name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("bad dataset name %q", name)
	}
	if opt.Client == nil {
		opt.Client = http.DefaultClient
	}
	logf := func(format string, a ...any) {
		if opt.Progress != nil {
			fmt.Fprintf(opt.Progress, format+"\n", a...)
		}
	}
	dest := filepath.Join(root, name)
	if st, err := os.Stat(filepath.Join(dest, "raw")); err == nil && st.IsDir() {
		logf("%s: already present, nothing to do", dest)
		return dest, nil
	}
	if _, err := os.Stat(dest); err == nil {
		return "", fmt.Errorf("%s exists but has no raw/ directory; remove it to download again", dest)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("download %s: %w", name, err)
	}
	zipPath := filepath.Join(root, name+".zip")
	if _, err := os.Stat(zipPath); err != nil {
		part := zipPath + ".part"
		if err := fetchResume(ctx, opt.Client, url, part, logf); err != nil {
			return "", fmt.Errorf("download %s from %s: %w", name, url, err)
		}
		if err := checkZip(part); err != nil {
			// A complete but corrupt file cannot be fixed by resuming it.
			os.Remove(part)
			return "", fmt.Errorf("download %s: %s is not a valid zip (%v); deleted it, rerun to download again", name, part, err)
		}
		if err := os.Rename(part, zipPath); err != nil {
			return "", fmt.Errorf("download %s: %w", name, err)
		}
	} else {
		logf("%s: using the downloaded zip", zipPath)
	}
	logf("unpacking %s", zipPath)
	if err := unzipDataset(zipPath, dest); err != nil {
		return "", fmt.Errorf("download %s: unpack %s: %w", name, zipPath, err)
	}
	if !opt.KeepZip {
		if err := os.Remove(zipPath); err != nil {
			return "", fmt.Errorf("download %s: %w", name, err)
		}
	}
	logf("%s: ready", dest)
	return dest, nil
}

// fetchResume downloads url to part, continuing a partial file with a Range
// request. It fails when the length differs from what the server
// announced; the partial file is kept so a rerun resumes it.
func fetchResume(ctx context.Context, client *http.Client, url, part string, logf func(string, ...any)) error {
	var have int64
	if st, err := os.Stat(part); err == nil {
		have = st.Size()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	total := int64(-1)
	flags := os.O_WRONLY | os.O_CREATE
	switch resp.StatusCode {
	case http.StatusOK: // fresh download, or the server ignored Range
		if have > 0 {
			logf("server does not resume; downloading from the start")
		}
		have = 0
		flags |= os.O_TRUNC
		total = resp.ContentLength
	case http.StatusPartialContent:
		start, end, size, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil {
			return err
		}
		if start != have {
			return fmt.Errorf("server resumed at byte %d, want %d", start, have)
		}
		if size >= 0 {
			total = size
		} else if end >= 0 {
			total = end + 1
		}
		flags |= os.O_APPEND
		logf("resuming at byte %d", have)
	case http.StatusRequestedRangeNotSatisfiable:
		// Our partial file already has every byte (or more than exist).
		if _, _, size, err := parseContentRange(resp.Header.Get("Content-Range")); err == nil && size == have {
			return nil
		}
		os.Remove(part)
		return fmt.Errorf("server refused to resume at byte %d; deleted %s, rerun to download again", have, part)
	default:
		return fmt.Errorf("HTTP status %s", resp.Status)
	}
	if total >= 0 {
		logf("downloading %s (%d bytes)", url, total)
	} else {
		logf("downloading %s (size unknown)", url)
	}
	f, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return err
	}
	n, copyErr := io.Copy(f, resp.Body)
	syncErr := f.Sync()
	closeErr := f.Close()
	got := have + n
	if copyErr != nil {
		return fmt.Errorf("interrupted after %d bytes (%w); rerun to resume", got, copyErr)
	}
	if err := errors.Join(syncErr, closeErr); err != nil {
		return err
	}
	if total >= 0 && got != total {
		return fmt.Errorf("got %d of %d bytes; rerun to resume", got, total)
	}
	return nil
}

// parseContentRange parses "bytes START-END/SIZE" or "bytes */SIZE"; unknown
// parts are -1.
func parseContentRange(s string) (start, end, size int64, err error) {
	bad := fmt.Errorf("bad Content-Range %q", s)
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, 0, 0, bad
	}
	rng, sz, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, 0, bad
	}
	size = -1
	if sz != "*" {
		if size, err = strconv.ParseInt(sz, 10, 64); err != nil || size < 0 {
			return 0, 0, 0, bad
		}
	}
	start, end = -1, -1
	if rng != "*" {
		a, b, ok := strings.Cut(rng, "-")
		if !ok {
			return 0, 0, 0, bad
		}
		if start, err = strconv.ParseInt(a, 10, 64); err != nil || start < 0 {
			return 0, 0, 0, bad
		}
		if end, err = strconv.ParseInt(b, 10, 64); err != nil || end < start {
			return 0, 0, 0, bad
		}
	}
	return start, end, size, nil
}

// checkZip opens the zip's central directory (which fails on a truncated or
// foreign file); the CRC of each member is checked while unpacking.
func checkZip(p string) error {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return err
	}
	defer zr.Close()
	if len(zr.File) == 0 {
		return errors.New("empty archive")
	}
	return nil
}

// unzipDataset unpacks zipPath into dest. The OGB zips hold one top
// directory (e.g. "arxiv/"), which is stripped so that dest/raw exists. The
// archive is unpacked into a temporary directory renamed to dest at the end;
// any bad member (unsafe path, CRC mismatch) leaves nothing behind.
func unzipDataset(zipPath, dest string) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return err
	}
	defer zr.Close()
	// Common first path component, if every member has one.
	// macOS archivers add a __MACOSX/ tree of resource forks; skip it.
	var files []*zip.File
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "__MACOSX/") {
			files = append(files, f)
		}
	}
	prefix := ""
	for i, f := range files {
		first, _, ok := strings.Cut(f.Name, "/")
		if !ok {
			prefix = ""
			break
		}
		if i == 0 {
			prefix = first + "/"
		} else if prefix != first+"/" {
			prefix = ""
			break
		}
	}
	return writeDirAtomic(dest, func(tmp string) error {
		for _, f := range files {
			name := strings.TrimPrefix(f.Name, prefix)
			if name == "" {
				continue
			}
			clean := path.Clean(name)
			if path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, "\\") {
				return fmt.Errorf("member %q: unsafe path", f.Name)
			}
			target := filepath.Join(tmp, filepath.FromSlash(clean))
			if f.FileInfo().IsDir() {
				if err := os.MkdirAll(target, 0o755); err != nil {
					return err
				}
				continue
			}
			if !f.Mode().IsRegular() {
				return fmt.Errorf("member %q: not a regular file", f.Name)
			}
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := extractOne(f, target); err != nil {
				return fmt.Errorf("member %q: %w", f.Name, err)
			}
		}
		if st, err := os.Stat(filepath.Join(tmp, "raw")); err != nil || !st.IsDir() {
			return errors.New("archive has no raw/ directory (not an OGB dataset zip)")
		}
		return nil
	})
}

func extractOne(f *zip.File, target string) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	// Reading to EOF makes archive/zip verify the CRC-32.
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
