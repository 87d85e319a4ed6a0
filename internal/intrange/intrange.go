package intrange

import (
	"fmt"
	"strconv"
	"strings"
)

// Compact writes ascending xs as ranges of consecutive values, separated
// by ", ".
func Compact(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(xs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
