package collectives

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Agree turns a rank-local error into the same outcome on every rank: each
// rank adds 1 to one sum if localErr != nil, and if the sum is not zero
// every rank returns an error. A rank that failed returns localErr itself;
// a rank that did not returns an *OthersFailedError counting the ranks
// that did ("1 other rank(s) failed (see their errors)"), which callers may
// word for their context (errors.As). It is collective, so a failure on one
// rank never leaves the others blocked in a later collective; its wait is
// labelled "allreduce" for the stall watchdog.
//
// It is the one agree-on-error of mpignn: the training loop reaches it
// through its reducer (package train may not import MPI), the stores and
// commands call it directly.
func Agree(c *Comm, localErr error) error {
	defer c.Phase("allreduce")()
	flag := int64(0)
	if localErr != nil {
		flag = 1
	}
	failed, err := AllreduceScalar(c, flag, Sum)
	if err != nil {
		if localErr != nil {
			return errors.Join(localErr, err)
		}
		return fmt.Errorf("agree on errors: %w", err)
	}
	if failed == 0 {
		return nil
	}
	own := localErr
	if own == nil {
		own = &OthersFailedError{Failed: failed}
	}
	first, msg, xerr := firstFailure(c, localErr)
	if xerr != nil {
		// Without the first failure's message every rank keeps its own
		// error, as before (and ends the job through spmd's abort).
		return own
	}
	return &JobFailure{err: own, First: first, Msg: msg}
}

// JobFailure is Agree's error on every rank when some rank failed: this
// rank's own error (its local error, or *OthersFailedError), which Error
// and Unwrap return unchanged, plus the lowest failing rank and the text of
// its local error, which every rank learnt in the same exchange. All ranks
// returned from the same Agree, so the command can end the job with one
// line from one rank and a clean exit on every rank instead of an abort
// (mpignn's runWorld), as long as the error reaches it wrapped (%w).
type JobFailure struct {
	err   error
	First int    // the lowest rank that failed
	Msg   string // its local error's text
}

func (e *JobFailure) Error() string { return e.err.Error() }
func (e *JobFailure) Unwrap() error { return e.err }

// Failed returns the JobFailure of an error every rank holds after one
// exchange: err is this rank's, first the rank it came from and msg its
// text there (a root's error broadcast to every rank, say).
func Failed(err error, first int, msg string) *JobFailure {
	return &JobFailure{err: err, First: first, Msg: msg}
}

// Replace returns the job failure with err as this rank's error (a caller
// that rewords it keeps the job's first failure).
func (e *JobFailure) Replace(err error) error {
	return &JobFailure{err: err, First: e.First, Msg: e.Msg}
}

// maxFailureBytes bounds the first failure's message, which is checked
// before a buffer is sized from it.
const maxFailureBytes = 1 << 16

// firstFailure returns, on every rank, the lowest rank whose localErr is
// not nil and that error's text (cut to maxFailureBytes). It is
// collective, and only called once the ranks know that one failed.
func firstFailure(c *Comm, localErr error) (int, string, error) {
	mine := int64(c.Size())
	if localErr != nil {
		mine = int64(c.Rank())
	}
	first, err := AllreduceScalar(c, mine, Min)
	if err != nil {
		return 0, "", err
	}
	if first < 0 || first >= int64(c.Size()) {
		return 0, "", fmt.Errorf("agree on errors: first failing rank %d of %d", first, c.Size())
	}
	var msg []byte
	if int64(c.Rank()) == first {
		msg = []byte(localErr.Error())
		msg = msg[:min(len(msg), maxFailureBytes)]
	}
	n := []int64{int64(len(msg))}
	if err := Bcast(c, n, int(first)); err != nil {
		return 0, "", err
	}
	if n[0] < 0 || n[0] > maxFailureBytes {
		return 0, "", fmt.Errorf("agree on errors: a message of %d bytes", n[0])
	}
	if int64(c.Rank()) != first {
		msg = make([]byte, n[0])
	}
	if n[0] > 0 {
		if err := Bcast(c, msg, int(first)); err != nil {
			return 0, "", err
		}
	}
	return int(first), string(msg), nil
}

// OthersFailedError is Agree's error on a rank that did not fail itself:
// Failed ranks did, and report their own errors.
type OthersFailedError struct{ Failed int64 }

func (e *OthersFailedError) Error() string {
	return fmt.Sprintf("%d other rank(s) failed (see their errors)", e.Failed)
}

// AgreeOpen is Agree in the words of a distributed store or table being
// opened (what names it, why is this rank's reason, "" when it has none): a
// rank that failed returns "WHAT on rank R: WHY", the others "WHAT on rank
// R: another rank could not open its partition", so that every rank stops
// and the log says which one to read. It is collective.
func AgreeOpen(c *Comm, what, why string) error {
	var local error
	if why != "" {
		local = fmt.Errorf("%s on rank %d: %s", what, c.Rank(), why)
	}
	return AgreeStore(c, what, local)
}

// AgreeStore is AgreeOpen for a rank-local error that is already worded:
// the failing rank returns local itself, the others the same "another rank
// could not open its partition" line, and a failure of the agreement itself
// is prefixed with what.
func AgreeStore(c *Comm, what string, local error) error {
	err := Agree(c, local)
	var jf *JobFailure
	switch {
	case err == nil || errors.Is(err, local):
		return err
	case errors.As(err, new(*OthersFailedError)):
		other := fmt.Errorf("%s on rank %d: another rank could not open its partition", what, c.Rank())
		if errors.As(err, &jf) {
			return jf.Replace(other)
		}
		return other
	}
	return fmt.Errorf("%s: %w", what, err)
}

// Field is one named value that every rank of a job must hold identically
// before the ranks compute together: a flag, a property of the partition
// directory, the build of the binary. Source says where the value came from
// ("PARTDIR/META.json", "flag"), for the message that names a mismatch.
type Field struct {
	Name   string `json:"n"`
	Value  string `json:"v"`
	Source string `json:"s,omitempty"`
}

// maxFieldsBytes bounds the encoded fields one rank may announce. A peer's
// announced length is checked against it before anything is allocated.
const maxFieldsBytes = 1 << 20

// digestWords is the size of what AgreeFields gathers first, in int64s:
// a SHA-256 of the encoded fields (4 words) and the encoding's length.
const digestWords = 5

// MismatchError reports ranks that disagree on a field. Every rank returns
// the same error, built from the same gathered data.
type MismatchError struct{ msg string }

func (e *MismatchError) Error() string { return e.msg }

// Agreed tells spmd.Run that every rank holds this same error, so one line
// from rank 0 and a clean exit on every rank replace an MPI_Abort.
func (e *MismatchError) Agreed() bool { return true }

// AgreeFields checks that every rank passes the same fields, in the same
// order. It is collective and is meant to be the first collective of a
// command: its first exchange has the same size on every rank whatever the
// fields are (an Allgather of a digest), so ranks that were started with
// different flags, partition copies or binaries cannot corrupt each other's
// memory through mismatched message sizes. Only when the digests differ do
// the ranks exchange the fields themselves, to name what differs.
//
// On a mismatch every rank returns the same *MismatchError, naming the
// first field (in rank 0's order) that differs and the ranks that differ:
// "rank 1 has --hidden 32 but rank 0 has 16".
func AgreeFields(c *Comm, fields []Field) error {
	enc, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("agree: encode: %w", err)
	}
	if len(enc) > maxFieldsBytes {
		// Still take part in the exchange (announcing an oversized
		// encoding), so that the other ranks fail with us instead of
		// waiting.
		enc = nil
	}
	sum := sha256.Sum256(enc)
	mine := make([]int64, digestWords)
	for i := range 4 {
		mine[i] = int64(binary.LittleEndian.Uint64(sum[8*i:]))
	}
	mine[4] = int64(len(enc))
	if enc == nil {
		mine[4] = -1
	}
	all, err := Allgather(c, mine)
	if err != nil {
		return fmt.Errorf("agree: %w", err)
	}
	lens := make([]int64, c.size)
	same := true
	for r := range c.size {
		d := all[r*digestWords : (r+1)*digestWords]
		lens[r] = d[4]
		if !slices.Equal(d, all[:digestWords]) {
			same = false
		}
	}
	if same && lens[0] >= 0 {
		return nil
	}
	for r, n := range lens {
		if n < 0 || n > maxFieldsBytes {
			return &MismatchError{fmt.Sprintf("rank %d announced %d bytes of start-up fields (limit %d)", r, n, maxFieldsBytes)}
		}
	}
	got, counts, err := Allgatherv(c, enc)
	if err != nil {
		return fmt.Errorf("agree: %w", err)
	}
	if !slices.Equal(counts, lens) {
		return &MismatchError{fmt.Sprintf("ranks sent %v bytes of start-up fields after announcing %v", counts, lens)}
	}
	per := make([][]Field, c.size)
	bad := make([]bool, c.size)
	off := int64(0)
	for r, n := range counts {
		if err := json.Unmarshal(got[off:off+n], &per[r]); err != nil {
			bad[r] = true
		}
		off += n
	}
	return &MismatchError{DescribeMismatch(per, bad)}
}

// DescribeMismatch names the first field of per[0] on which some rank
// differs from rank 0, with the ranks grouped by their value. bad[r] marks a
// rank whose fields could not be decoded. It is pure: every rank computes
// the same text from the same gathered fields.
func DescribeMismatch(per [][]Field, bad []bool) string {
	for r := range per {
		if r < len(bad) && bad[r] {
			return fmt.Sprintf("rank %d sent start-up fields this binary cannot read (a different mpignn build?)", r)
		}
	}
	if len(per) == 0 {
		return "no ranks"
	}
	find := func(fs []Field, name string) (Field, bool) {
		for _, f := range fs {
			if f.Name == name {
				return f, true
			}
		}
		return Field{}, false
	}
	for _, ref := range per[0] {
		var order []string // distinct differing values, in rank order
		ranks := map[string][]int{}
		for r := 1; r < len(per); r++ {
			f, ok := find(per[r], ref.Name)
			v := missingField
			if ok {
				v = f.Value
			}
			if ok && v == ref.Value {
				continue
			}
			if _, seen := ranks[v]; !seen {
				order = append(order, v)
			}
			ranks[v] = append(ranks[v], r)
		}
		if len(order) == 0 {
			continue
		}
		var parts []string
		for _, v := range order {
			if v == missingField {
				parts = append(parts, fmt.Sprintf("%s no %s", rankList(ranks[v]), ref.Name))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s %s", rankList(ranks[v]), ref.Name, quoteValue(v)))
		}
		msg := fmt.Sprintf("%s but rank 0 has %s", strings.Join(parts, ", "), quoteValue(ref.Value))
		if ref.Source != "" {
			msg += " (" + ref.Source + ")"
		}
		return msg
	}
	// Every field of rank 0 matches; some rank has extra fields.
	for r := 1; r < len(per); r++ {
		for _, f := range per[r] {
			if _, ok := find(per[0], f.Name); !ok {
				return fmt.Sprintf("rank %d has %s %s but rank 0 has no such field", r, f.Name, quoteValue(f.Value))
			}
		}
	}
	return "ranks disagree on the order of their start-up fields"
}

// missingField stands for a field a rank does not have; a NUL cannot occur
// in a value that came through flags or META.json.
const missingField = "\x00missing"

// rankList renders "rank 1 has" or "ranks 1, 3 have".
func rankList(rs []int) string {
	if len(rs) == 1 {
		return fmt.Sprintf("rank %d has", rs[0])
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	return "ranks " + strings.Join(s, ", ") + " have"
}

// quoteValue leaves plain values as they are and quotes empty ones or ones
// with spaces, so the message stays unambiguous.
func quoteValue(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\n\"") {
		return fmt.Sprintf("%q", v)
	}
	return v
}

// IsMismatch reports whether err is (or wraps) a *MismatchError.
func IsMismatch(err error) bool {
	var m *MismatchError
	return errors.As(err, &m)
}
