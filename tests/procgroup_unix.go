//go:build unix

package tests

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts cmd in a new process group and makes cancellation
// kill the whole group, so a hung job leaves no ranks behind.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
