package collectives

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBcastBytes: every rank gets root's bytes (an empty payload included),
// or, when root failed, a JobFailure naming root and its message, whatever
// the non-roots passed in.
func TestBcastBytes(t *testing.T) {
	for _, nc := range comms(t) {
		c := nc.c
		for root := range c.Size() {
			for _, tc := range []struct {
				name    string
				payload []byte
				rootErr error
			}{
				{"data", []byte(fmt.Sprintf("from %d", root)), nil},
				{"empty", []byte{}, nil},
				{"root failed", nil, errors.New("no such file")},
			} {
				t.Run(fmt.Sprintf("%s/root=%d/%s", nc.name, root, tc.name), func(t *testing.T) {
					data, rootErr := []byte("not root"), error(nil)
					if c.Rank() == root {
						data, rootErr = tc.payload, tc.rootErr
					}
					got, err := BcastBytes(c, root, data, rootErr)
					if tc.rootErr == nil {
						require.NoError(t, err)
						assert.Equal(t, string(tc.payload), string(got))
						return
					}
					var jf *JobFailure
					require.ErrorAs(t, err, &jf)
					assert.Equal(t, root, jf.First)
					assert.Equal(t, tc.rootErr.Error(), jf.Msg)
					assert.Nil(t, got)
				})
			}
		}
	}
}
