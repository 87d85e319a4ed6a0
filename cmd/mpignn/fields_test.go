package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"mpignn/config"
	"mpignn/partition"
	"mpignn/train/dist"
)

// hasPath reports whether the dotted field path exists in type t
// (through pointers).
func hasPath(t reflect.Type, path string) bool {
	for _, name := range strings.Split(path, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := t.FieldByName(name)
		if !ok {
			return false
		}
		t = f.Type
	}
	return true
}

// TestFieldFlagsNameRealFields: every path the CLI maps to a flag is a
// field of an options type the library validates, so a renamed field
// fails here rather than printing its path to users.
func TestFieldFlagsNameRealFields(t *testing.T) {
	types := []reflect.Type{reflect.TypeFor[dist.TrainConfig](), reflect.TypeFor[dist.PredictConfig](),
		reflect.TypeFor[dist.EmbedConfig](), reflect.TypeFor[partition.Options]()}
	for path, flag := range fieldFlags() {
		found := false
		for _, ty := range types {
			found = found || hasPath(ty, path)
		}
		assert.True(t, found, "%s (%s) is no field of the options types", path, flag)
	}
}

// TestFlagNames: a library error naming fields prints with the flags,
// wrapped or not, and the train command spells PartDir as its two flags.
func TestFlagNames(t *testing.T) {
	err := fmt.Errorf("train: %w", config.Errorf("{Loader.Batch} %d x %d ranks", 5, 2))
	require.EqualError(t, flagNames(err), "train: --batch 5 x 2 ranks")
	require.ErrorIs(t, flagNames(err), err, "the library error stays in the chain")
	require.EqualError(t, flagNames(config.Errorf("the dataset ({PartDir})"), trainFieldFlags()), "the dataset (--data/--parts)")
	require.EqualError(t, flagNames(config.Errorf("{PartDir}")), "--parts")
	plain := fmt.Errorf("no fields")
	require.Same(t, plain, flagNames(plain))
}

// TestFlagWriter: the library's output lines name flags on the command
// line's writer.
func TestFlagWriter(t *testing.T) {
	var b strings.Builder
	_, err := config.Fprintf(flagWriter{&b, []map[string]string{trainFieldFlags()}}, "continue with {Resume} (or {ResumeAuto}) on {PartDir}\n")
	require.NoError(t, err)
	assert.Equal(t, "continue with --resume (or --resume auto) on --data/--parts\n", b.String())
}
