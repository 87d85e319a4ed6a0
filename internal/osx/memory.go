package osx

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// MaxAddressable is the most memory a make() can be asked for; anything
// beyond is refused even where the machine's memory is unknown.
const MaxAddressable = float64(1 << 47)

// FitsMemory reports whether need bytes can be allocated by one process
// here: below MaxAddressable and, where the machine tells (avail > 0),
// within its available memory. avail is returned for the caller's message,
// which names the flags that set need.
func FitsMemory(need float64) (avail int64, ok bool) {
	avail = AvailableMemory()
	return avail, need <= MaxAddressable && (avail <= 0 || need <= float64(avail))
}

// FormatBytes prints a byte count with a binary unit ("23 GiB", "1.5 KiB").
func FormatBytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b >= 100 || i == 0 || b == math.Trunc(b) {
		return fmt.Sprintf("%.0f %s", b, units[i])
	}
	return fmt.Sprintf("%.2g %s", b, units[i])
}

// ParseMeminfo returns MemAvailable from /proc/meminfo text, or MemTotal
// when the kernel does not report MemAvailable (before Linux 3.14), in
// bytes.
func ParseMeminfo(r io.Reader) (int64, error) {
	vals := map[string]int64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "MemAvailable" && k != "MemTotal") {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, fmt.Errorf("meminfo: %s: no value", k)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 || n > math.MaxInt64/1024 {
			return 0, fmt.Errorf("meminfo: %s: bad value %q", k, f[0])
		}
		if len(f) > 1 && f[1] != "kB" {
			return 0, fmt.Errorf("meminfo: %s: unit %q, want kB", k, f[1])
		}
		vals[k] = n * 1024
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("meminfo: %w", err)
	}
	if v, ok := vals["MemAvailable"]; ok {
		return v, nil
	}
	if v, ok := vals["MemTotal"]; ok {
		return v, nil
	}
	return 0, fmt.Errorf("meminfo: neither MemAvailable nor MemTotal")
}

// AvailableMemory returns this machine's available memory in bytes from
// /proc/meminfo, or 0 where that file is missing or unreadable (other
// systems): callers then check only what no machine can hold.
func AvailableMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	n, err := ParseMeminfo(f)
	if err != nil {
		return 0
	}
	return n
}

// ProcKB returns the first number, in kB, of the line of a /proc file that
// starts with key ("Pss:" of /proc/self/smaps_rollup, "VmHWM:" of
// /proc/self/status), or -1 where the file or the line is missing (not
// Linux, an old kernel).
func ProcKB(file, key string) int64 {
	f, err := os.Open(file)
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			if fields := strings.Fields(rest); len(fields) >= 1 {
				if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
					return kb
				}
			}
		}
	}
	return -1
}

// PSS returns this process's proportional set size in bytes (-1 where the
// kernel does not tell): its private pages plus its share of the pages it
// maps with other processes. Ranks of a node that map one shared window
// each count a part of it, where RSS would count all of it in every rank.
func PSS() int64 {
	kb := ProcKB("/proc/self/smaps_rollup", "Pss:")
	if kb < 0 {
		return -1
	}
	return kb << 10
}
