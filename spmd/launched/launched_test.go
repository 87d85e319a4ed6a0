package launched

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRank(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int
	}{
		{"no launcher", nil, 0},
		{"hydra", map[string]string{"PMI_RANK": "3"}, 3},
		{"openmpi first", map[string]string{"PMI_RANK": "3", "OMPI_COMM_WORLD_RANK": "2"}, 2},
		{"srun", map[string]string{"SLURM_PROCID": "5"}, 5},
		{"negative skipped", map[string]string{"OMPI_COMM_WORLD_RANK": "-1", "PMIX_RANK": "4"}, 4},
		{"garbage skipped", map[string]string{"OMPI_COMM_WORLD_RANK": "x"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range rankVars {
				t.Setenv(k, tc.env[k])
			}
			assert.Equal(t, tc.want, Rank())
		})
	}
}
