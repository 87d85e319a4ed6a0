package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFieldError(t *testing.T) {
	flags := map[string]string{"Loader.Batch": "--batch", "Model.Dropout": "--dropout", "Eval": "--eval"}
	name := func(p string) string { return flags[p] }
	cases := []struct {
		name       string
		err        error
		field      string
		plain, cli string
	}{
		{"one field", Errorf("{Loader.Batch} %d must be positive", 0), "Loader.Batch",
			"Loader.Batch 0 must be positive", "--batch 0 must be positive"},
		{"two fields, wrapped", fmt.Errorf("train: %w", Errorf("{Eval} %s with {Loader.Batch}", "x")), "Eval",
			"train: Eval x with Loader.Batch", "train: --eval x with --batch"},
		{"braces in an argument are not fields", Errorf("{Eval} %q", "{Loader.Batch}"), "Eval",
			`Eval "{Loader.Batch}"`, `--eval "{Loader.Batch}"`},
		{"not a path stays text", Errorf("{Eval} {not a field} {x}"), "Eval",
			"Eval {not a field} {x}", "--eval {not a field} {x}"},
		{"nested", In("Model", Errorf("{Dropout} %v must be in [0,1)", 1.0)), "Model.Dropout",
			"Model.Dropout 1 must be in [0,1)", "--dropout 1 must be in [0,1)"},
		{"renamed", Renamed(Errorf("{Split} %q with {Other}", "x"), map[string]string{"Split": "Eval"}), "Eval",
			`Eval "x" with Other`, `--eval "x" with Other`},
		{"unknown field keeps its path", Errorf("{Other} bad"), "Other", "Other bad", "Other bad"},
		{"joined", errors.Join(errors.New("plain"), Errorf("{Eval} bad")), "Eval",
			"plain\nEval bad", "plain\n--eval bad"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var fe *FieldError
			require.ErrorAs(t, tc.err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.Equal(t, tc.plain, tc.err.Error())
			assert.Equal(t, tc.cli, Render(tc.err, name))
		})
	}
	assert.Equal(t, "x", Render(errors.New("x"), name), "an error without fields is its text")
	assert.Equal(t, []string{"Eval", "Loader.Batch"}, Errorf("{Eval} and {Loader.Batch}").Fields())
	assert.Panics(t, func() { Errorf("no field") })
	assert.NoError(t, In("Model", nil))
	assert.NoError(t, Renamed(nil, map[string]string{"A": "B"}))
}

func TestFieldErrorName(t *testing.T) {
	e := Errorf("differs: %s", Name("Model.Hidden")+" was 1")
	assert.Equal(t, "Model.Hidden", e.Field)
	assert.Equal(t, "differs: --hidden was 1", e.Render(func(string) string { return "--hidden" }))
}

// namer spells every field as --x.
type namer struct{ strings.Builder }

func (*namer) FieldName(string) string { return "--x" }

func TestFprintf(t *testing.T) {
	var plain strings.Builder
	_, err := Fprintf(&plain, "run %d ({ResumeAuto})\n", 3)
	require.NoError(t, err)
	assert.Equal(t, "run 3 (ResumeAuto)\n", plain.String())
	var n namer
	_, err = Fprintf(&n, "run %d ({ResumeAuto}) {not a field}\n", 3)
	require.NoError(t, err)
	assert.Equal(t, "run 3 (--x) {not a field}\n", n.String())
}
