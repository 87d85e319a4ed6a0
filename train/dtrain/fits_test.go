package dtrain

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/config"
	"mpignn/train"
)

// TestCheckFitsNamesFields: a model too large for any machine is refused
// with the fields to lower named as fields, which a command line spells as
// its flags.
func TestCheckFitsNamesFields(t *testing.T) {
	c := comm(t)
	err := checkFits(c, train.MemoryEstimate{Params: 1 << 50}, "lower {Model.Hidden} or {Loader.Batch}")
	require.Error(t, err)
	var fe *config.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Model.Hidden", fe.Field)
	assert.Contains(t, err.Error(), "more than any machine can address; lower Model.Hidden or Loader.Batch")
	flags := map[string]string{"Model.Hidden": "--hidden", "Loader.Batch": "--batch"}
	assert.Contains(t, config.Render(err, func(p string) string { return flags[p] }), "; lower --hidden or --batch")
	require.NoError(t, checkFits(c, train.MemoryEstimate{Params: 1}, "lower {Loader.Batch}"))
}
