package osx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"mpignn/internal/tempout"
	"mpignn/internal/testhold"
)

// WriteFileAtomic replaces path with data: write a temporary file in the
// same directory, fsync it, rename it over path, fsync the directory. A
// crash leaves either the old or the new file, never a mix. Every output of
// a run (checkpoints, metrics, predictions, plots) is written this way.
//
// The temporary is tempout.Own(path), named by our PID, so a command can
// register it for removal on SIGINT/SIGTERM before it exists; temporaries of
// path left by a killed writer (a dead PID) are removed first. Errors name
// path once: "write PATH: no space left on device".
func WriteFileAtomic(path string, data []byte) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("write %s: %w", path, Pathless(err))
		}
	}()
	dir := filepath.Dir(path)
	if _, err := tempout.RemoveStale(path); err != nil {
		return err
	}
	tmp := tempout.Own(path)
	// O_EXCL: never write through a symlink planted at the predictable name.
	// A file already there carries our PID, so it is a leftover of ours (or
	// of a dead process whose PID we reuse) and can go.
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		if err = os.Remove(tmp); err == nil {
			f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	testhold.At("temp:" + filepath.Base(path))
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// Pathless drops the file name an *fs.PathError or *os.LinkError adds (the
// temporary's, which means nothing to the user) and keeps the cause. Only
// the outermost error is unwrapped: wrapped errors already carry context.
func Pathless(err error) error {
	switch e := err.(type) {
	case *fs.PathError:
		return e.Err
	case *os.LinkError:
		return e.Err
	}
	return err
}

// SyncDir makes a rename in dir durable: the renamed entry survives a
// crash. Its error names dir once.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("sync %s: %w", dir, Pathless(err))
	}
	return d.Close()
}
