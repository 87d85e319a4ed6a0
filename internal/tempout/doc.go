// Package tempout names, sweeps and cleans up the temporary files and
// directories that commands write before renaming them to their final
// output.
//
// A temporary of output OUT (a file or a directory) is DIR/.BASE.tmp-PID,
// optionally followed by a suffix that starts with '.' or '-', where PID is
// the writing process. The name is deterministic, so a command can register
// it for removal before it exists, and the PID says whether its writer still
// runs: RemoveStale deletes the temporaries of an output whose writer is
// gone (a SIGKILL or a crash leaves them behind), and Cleanup deletes the
// process's own temporaries when SIGINT or SIGTERM arrives and exits with
// 130 or 143, as a shell does for a process killed by that signal.
//
// PIDs are only meaningful on one host: a temporary being written right now
// by a process on another host that shares the file system would look stale
// here. Writing one output from two hosts at once is not supported anyway.
//
// The package does not use MPI.
package tempout
