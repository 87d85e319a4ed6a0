package spmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoteExit: a non-zero code is appended to the launcher's file, one
// line per exit; code 0, an unset variable or a file the launcher did not
// create (another host) note nothing, and nothing is created.
func TestNoteExit(t *testing.T) {
	tests := []struct {
		name   string
		create bool   // the launcher made the file
		env    bool   // ExitFileEnv is set
		codes  []int  // noted in turn
		want   string // the file's contents ("" and !create: absent)
	}{
		{"stopped", true, true, []int{75}, "75\n"},
		{"two ranks", true, true, []int{75, 1}, "75\n1\n"},
		{"success", true, true, []int{0}, ""},
		{"no variable", true, false, []int{75}, ""},
		{"no file", false, true, []int{75}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "exit")
			if tt.create {
				require.NoError(t, os.WriteFile(path, nil, 0o600))
			}
			if tt.env {
				t.Setenv(ExitFileEnv, path)
			} else {
				t.Setenv(ExitFileEnv, "")
			}
			for _, c := range tt.codes {
				noteExit(c)
			}
			b, err := os.ReadFile(path)
			if !tt.create {
				assert.ErrorIs(t, err, os.ErrNotExist, "a rank must not create the file")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
		})
	}
}
