package tests

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPureCoreLinksNoMPI: the sampling core and the trainer, with their
// tests, build without MPI (so `go test ./train ./sample` runs on a machine
// without it), while the distributed packages do link it, which shows the
// check can tell the two apart.
func TestPureCoreLinksNoMPI(t *testing.T) {
	// The packages that link MPI: our runtime and collectives, and the
	// gompi binding (with its subpackages) under them. spmd/launched, which
	// only reads the launcher's environment, links none.
	mpiImports := []string{"mpignn/spmd", "mpignn/collectives", gompi}
	cases := []struct {
		pkgs    []string
		wantMPI bool
	}{
		{[]string{"./train", "./train/kernels", "./sample", "./sample/sampletest", "./graph", "./partition"}, false},
		{[]string{"./sample/dsample"}, true},
		{[]string{"./train/dtrain"}, true},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.pkgs, " "), func(t *testing.T) {
			cmd := exec.Command("go", append([]string{"list", "-deps", "-test"}, tc.pkgs...)...)
			cmd.Dir = h.Root
			out, err := cmd.Output()
			require.NoError(t, err, "go list -deps -test %v", tc.pkgs)
			deps := strings.Fields(string(out))
			require.NotEmpty(t, deps)
			var found []string
			for _, d := range deps {
				for _, m := range mpiImports {
					if d == m || (m == gompi && strings.HasPrefix(d, m+"/")) {
						found = append(found, d)
					}
				}
			}
			if tc.wantMPI {
				assert.NotEmpty(t, found, "%v should link MPI (is the check still looking at the right names?)", tc.pkgs)
			} else {
				assert.Empty(t, found, "%v link MPI", tc.pkgs)
			}
		})
	}
}
