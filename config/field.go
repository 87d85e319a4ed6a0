package config

import (
	"fmt"
	"io"
	"strings"
)

// FieldError is a configuration mistake: Field is the option at fault,
// as a dotted path from the options type given to the library
// ("Loader.Batch" of dtrain.TrainConfig, "Method" of partition.Options),
// and the message may name other fields the same way. Error spells each
// field by its path; Render by a caller's name for it (a flag).
type FieldError struct {
	// Field is the first field the message names: the one at fault.
	Field string
	// msg is the formatted message with each field named as mark+path+mark.
	msg string
}

// mark brackets a field path inside msg. It cannot occur in formatted
// values (paths, numbers, user strings read from flags or files), so an
// argument that happens to contain braces is never taken for a field.
const mark = "\x00"

// Errorf returns a FieldError whose message is format with args, where
// {Path} in format (not in args) names the field Path; an argument made by
// Name names one too. The first field named is the one at fault. A message
// without a field is a programming mistake and panics.
func Errorf(format string, args ...any) *FieldError {
	e := &FieldError{msg: fmt.Sprintf(Mark(format), args...)}
	f := e.Fields()
	if len(f) == 0 {
		panic("config.Errorf: no {Field} in " + format)
	}
	e.Field = f[0]
	return e
}

// Mark returns text with each {Path} in it marked as Name(Path), for a
// message built from parts.
func Mark(text string) string {
	var b strings.Builder
	rest := text
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 || !isPath(rest[i+1:i+j]) {
			b.WriteString(rest[:i+1])
			rest = rest[i+1:]
			continue
		}
		b.WriteString(rest[:i] + Name(rest[i+1:i+j]))
		rest = rest[i+j+1:]
	}
	return b.String()
}

// Name returns the field path marked for a message of Errorf built from
// parts (as an argument, where braces would be taken as text).
func Name(path string) string { return mark + path + mark }

// isPath reports whether s is a dotted Go field path such as Loader.Batch.
func isPath(s string) bool {
	if s == "" {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" || !(part[0] >= 'A' && part[0] <= 'Z') {
			return false
		}
		for _, r := range part {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return false
			}
		}
	}
	return true
}

// Error spells every field by its path.
func (e *FieldError) Error() string { return e.Render(nil) }

// Fields lists the fields the message names, in order, the one at fault
// first.
func (e *FieldError) Fields() []string {
	var out []string
	parts := strings.Split(e.msg, mark)
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}

// Render spells the message with name(path) for every field; name may
// return "" (or be nil) to keep the path.
func (e *FieldError) Render(name func(path string) string) string {
	parts := strings.Split(e.msg, mark)
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 && name != nil {
			if n := name(p); n != "" {
				p = n
			}
		}
		b.WriteString(p)
	}
	return b.String()
}

// In returns err with the field paths of a FieldError under prefix, so
// that Validate of an options type nested in another (train.Config as
// dtrain.TrainConfig's Model) names the outer path. Any other error (nil
// included) is returned as it is.
func In(prefix string, err error) error {
	fe, ok := err.(*FieldError)
	if !ok {
		return err
	}
	parts := strings.Split(fe.msg, mark)
	for i := 1; i < len(parts); i += 2 {
		parts[i] = prefix + "." + parts[i]
	}
	return &FieldError{Field: prefix + "." + fe.Field, msg: strings.Join(parts, mark)}
}

// Renamed returns err with the field paths of a FieldError renamed as
// paths maps them (a path not in it is kept), for options of one type
// that a caller fills from fields of its own under other names
// (dtrain.TrainConfig's LinkSplit is the Split of partition.LinkOptions).
// Any other error (nil included) is returned as it is.
func Renamed(err error, paths map[string]string) error {
	fe, ok := err.(*FieldError)
	if !ok {
		return err
	}
	parts := strings.Split(fe.msg, mark)
	for i := 1; i < len(parts); i += 2 {
		if p, ok := paths[parts[i]]; ok {
			parts[i] = p
		}
	}
	e := &FieldError{msg: strings.Join(parts, mark)}
	e.Field = e.Fields()[0]
	return e
}

// Render spells err with name(path) for the fields of every FieldError in
// its chain (wrapped with %w or joined with errors.Join); the text around
// them is kept as err's Error has it.
func Render(err error, name func(path string) string) string {
	if err == nil {
		return ""
	}
	text := err.Error()
	for _, fe := range fieldErrors(err) {
		text = strings.Replace(text, fe.Error(), fe.Render(name), 1)
	}
	return text
}

// fieldErrors lists the FieldErrors of err's chain, depth first.
func fieldErrors(err error) []*FieldError {
	switch e := err.(type) {
	case nil:
		return nil
	case *FieldError:
		return []*FieldError{e}
	case interface{ Unwrap() []error }:
		var out []*FieldError
		for _, x := range e.Unwrap() {
			out = append(out, fieldErrors(x)...)
		}
		return out
	case interface{ Unwrap() error }:
		return fieldErrors(e.Unwrap())
	}
	return nil
}

// Namer is implemented by a writer that spells fields its own way (a
// command line's writer spells them as flags); see Fprintf.
type Namer interface {
	FieldName(path string) string
}

// Fprintf writes format with args to w as Errorf builds a message: each
// {Path} in format names a field, spelled by w's FieldName when w is a
// Namer and by its path otherwise. It is for the lines a library prints
// that name an option ("starting a fresh run (ResumeAuto)").
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	text := fmt.Sprintf(Mark(format), args...)
	var name func(string) string
	if n, ok := w.(Namer); ok {
		name = n.FieldName
	}
	return io.WriteString(w, (&FieldError{msg: text}).Render(name))
}
