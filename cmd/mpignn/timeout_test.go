package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/internal/watchdog"
)

// TestTimeoutFlag: --timeout takes a Go duration, 0 turns the watchdog
// off, a negative or malformed value is refused naming the flag.
func TestTimeoutFlag(t *testing.T) {
	tests := []struct {
		args []string
		want time.Duration
		err  string
	}{
		{nil, watchdog.DefaultTimeout, ""},
		{[]string{"--timeout", "30s"}, 30 * time.Second, ""},
		{[]string{"--timeout", "0"}, 0, ""},
		{[]string{"--timeout", "-1s"}, 0, `invalid value "-1s" for flag -timeout: must not be negative`},
		{[]string{"--timeout", "5"}, 0, `invalid value "5" for flag -timeout: want a Go duration`},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var d time.Duration
		addTimeoutFlag(fs, &d)
		err := fs.Parse(tt.args)
		if tt.err != "" {
			require.Error(t, err, "%v", tt.args)
			assert.Contains(t, err.Error(), tt.err)
			continue
		}
		require.NoError(t, err, "%v", tt.args)
		assert.Equal(t, tt.want, d, "%v", tt.args)
	}
}

// TestEveryMPICommandHasTimeout: each command that runs under MPI takes
// --timeout (its flag set is built by the command's parser, which rejects
// an unknown flag before MPI starts).
func TestEveryMPICommandHasTimeout(t *testing.T) {
	for _, args := range [][]string{
		{"train"}, {"predict"}, {"embed"}, {"sample"}, {"bench", "comm"}, {"bench", "sample"}, {"bench", "infer"},
	} {
		cmd := commands()[args[0]]
		err := cmd.run(append(args[1:], "--timeout", "-1s"))
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), `--timeout "-1s": must not be negative`, "%v", args)
	}
}
