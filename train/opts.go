package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"mpignn/config"
)

// Opts are the hyper-parameters an architecture owns (Arch.Params), by
// key: GAT's heads and attention dropout, GIN's learnable ε, SAGE's
// aggregator. The shared Config keeps what every model has; a layer file
// declares its own, and the config carries them here without knowing them.
//
// Opts is a comparable value, so Configs still compare with ==: the text
// "key=value,key=value" sorted by key, each value a JSON literal (8, 0.6,
// true, "max"). The zero value holds nothing. A model config's JSON writes
// every key at its top level, as the fields they replace were written, so
// checkpoints of either spelling read alike.
type Opts string

// ParamKind is the type of an architecture's hyper-parameter.
type ParamKind int

// The kinds of Param.
const (
	ParamInt ParamKind = iota
	ParamFloat
	ParamBool
	ParamChoice
)

// Param declares one hyper-parameter of an architecture: its key in the
// model config, checkpoints and Opts, the flag that sets it (Flag), its
// type, the flag's default and help, and the value a config leaves out
// (the layer's behaviour without the key, so that adding a parameter does
// not change the JSON of existing models).
type Param struct {
	Key     string // snake_case: the JSON and Opts key
	Kind    ParamKind
	Choices []string // ParamChoice: the values allowed
	// Default is the flag's default, as the flag prints it ("8", "0",
	// "false", "mean"); a config of the architecture takes it when the
	// flag is not given.
	Default string
	// Omit is the value a config does not store ("" for none): the
	// layer reads a missing key as this value.
	Omit string
	Help string
	// EvalOnly marks a parameter set only when a trained model is
	// evaluated (predict, embed), never by train's flags.
	EvalOnly bool
}

// Flag is the command-line flag of the parameter: its key in kebab case.
func (p Param) Flag() string { return strings.ReplaceAll(p.Key, "_", "-") }

// field is the config.FieldError path of the parameter inside a Config.
func (p Param) field() string { return optField(p.Key) }

// Field is the parameter's path inside a Config for config.FieldError
// messages and settings ("Opts.AttnDropout"; a command line spells it as
// the flag).
func (p Param) Field() string { return p.field() }

// OptField is the Config field path of Opts key ("Opts.Heads").
func OptField(key string) string { return optField(key) }

// optField is the config.FieldError path of key: Opts.AttnDropout for
// attn_dropout (a command line spells it as the flag, --attn-dropout).
func optField(key string) string {
	var b strings.Builder
	b.WriteString("Opts.")
	for _, w := range strings.FieldsFunc(key, func(r rune) bool { return r == '_' || r == '-' }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// literal converts a flag's text to the parameter's JSON literal,
// refusing text of the wrong kind.
func (p Param) literal(text string) (string, error) {
	switch p.Kind {
	case ParamInt:
		v, err := strconv.Atoi(text)
		if err != nil {
			return "", config.Errorf("%s %q is not an integer", config.Name(p.field()), text)
		}
		return strconv.Itoa(v), nil
	case ParamFloat:
		v, err := strconv.ParseFloat(text, 32)
		if err != nil {
			return "", config.Errorf("%s %q is not a number", config.Name(p.field()), text)
		}
		return floatLiteral(float32(v)), nil
	case ParamBool:
		v, err := strconv.ParseBool(text)
		if err != nil {
			return "", config.Errorf("%s %q is not true or false", config.Name(p.field()), text)
		}
		return strconv.FormatBool(v), nil
	default:
		if !slices.Contains(p.Choices, text) {
			return "", config.Errorf("%s %q: want one of %s", config.Name(p.field()), text, strings.Join(p.Choices, ", "))
		}
		q, _ := json.Marshal(text)
		return string(q), nil
	}
}

// floatLiteral is the JSON literal encoding/json writes for a float32
// (so a float parameter serialises as the float32 field it replaces did).
func floatLiteral(v float32) string {
	b, err := json.Marshal(v)
	if err != nil { // NaN or ±Inf: not JSON; validation refuses them
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	}
	return string(b)
}

// entries splits o into key and literal pairs, in key order.
func (o Opts) entries() [][2]string {
	if o == "" {
		return nil
	}
	var kv [][2]string
	for _, e := range strings.Split(string(o), ",") {
		k, v, _ := strings.Cut(e, "=")
		kv = append(kv, [2]string{k, v})
	}
	return kv
}

// join is the canonical Opts of pairs (sorted by key).
func join(kv [][2]string) Opts {
	slices.SortFunc(kv, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	parts := make([]string, len(kv))
	for i, e := range kv {
		parts[i] = e[0] + "=" + e[1]
	}
	return Opts(strings.Join(parts, ","))
}

// Keys returns the keys o holds, sorted.
func (o Opts) Keys() []string {
	var ks []string
	for _, e := range o.entries() {
		ks = append(ks, e[0])
	}
	return ks
}

// Has reports whether o holds key.
func (o Opts) Has(key string) bool {
	_, ok := o.lit(key)
	return ok
}

// lit returns the JSON literal of key.
func (o Opts) lit(key string) (string, bool) {
	for _, e := range o.entries() {
		if e[0] == key {
			return e[1], true
		}
	}
	return "", false
}

// withLit returns o with key set to the JSON literal lit ("" removes it).
func (o Opts) withLit(key, lit string) Opts {
	kv := slices.DeleteFunc(o.entries(), func(e [2]string) bool { return e[0] == key })
	if lit != "" {
		kv = append(kv, [2]string{key, lit})
	}
	return join(kv)
}

// With returns o with key set to v (an int, float32, bool or string); a
// nil v removes the key. It is how code and tests spell a configuration:
// Config{Arch: ArchGAT, Opts: Opts("").With("heads", 8)}.
func (o Opts) With(key string, v any) Opts {
	if v == nil {
		return o.withLit(key, "")
	}
	if f, ok := v.(float32); ok {
		return o.withLit(key, floatLiteral(f))
	}
	b, err := json.Marshal(v)
	if err != nil {
		return o
	}
	return o.withLit(key, string(b))
}

// Text returns key's value as a flag would spell it (a choice unquoted),
// and whether o holds it.
func (o Opts) Text(key string) (string, bool) {
	l, ok := o.lit(key)
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal([]byte(l), &s) == nil {
		return s, true
	}
	return l, true
}

// Int returns the integer key (0 if absent or not an integer).
func (o Opts) Int(key string) int {
	t, _ := o.Text(key)
	v, _ := strconv.Atoi(t)
	return v
}

// Float32 returns the number key (0 if absent).
func (o Opts) Float32(key string) float32 {
	t, _ := o.Text(key)
	v, _ := strconv.ParseFloat(t, 32)
	return float32(v)
}

// Bool returns the boolean key (false if absent).
func (o Opts) Bool(key string) bool {
	t, _ := o.Text(key)
	v, _ := strconv.ParseBool(t)
	return v
}

// String returns the choice key, or def if o does not hold it.
func (o Opts) String(key, def string) string {
	if t, ok := o.Text(key); ok {
		return t
	}
	return def
}

// SetOpt sets the architecture parameter of flag name (kebab case) to the
// flag's text, checked against the parameter's kind; a value equal to the
// parameter's Omit removes the key. It refuses a flag the configured
// architecture does not own, naming the flag (config.FieldError). With
// Arch unset (a default chosen later from the data) any architecture's
// parameter is taken, and Validate checks its owner once Arch is known.
func (c *Config) SetOpt(flag, text string) error { return c.setOpt(builtinArchs(), flag, text) }

func (c *Config) setOpt(t archTable, flag, text string) error {
	var (
		p  Param
		ok bool
	)
	if c.Arch == "" {
		for _, a := range t {
			if p, ok = a.param(flag); ok {
				break
			}
		}
	} else {
		a, err := t.lookup(c.Arch)
		if err != nil {
			return config.Errorf("{Arch} %q: want one of %s", c.Arch, strings.Join(append(t.names(false), t.names(true)...), ", "))
		}
		p, ok = a.param(flag)
	}
	if !ok {
		return notOwned(t, flag, c.ArchName())
	}
	lit, err := p.literal(text)
	if err != nil {
		return err
	}
	if p.Omit != "" {
		if omit, _ := p.literal(p.Omit); omit == lit {
			lit = ""
		}
	}
	c.Opts = c.Opts.withLit(p.Key, lit)
	return nil
}

// param finds the architecture's parameter of flag name (or key).
func (a Arch) param(name string) (Param, bool) {
	for _, p := range a.Params {
		if p.Flag() == name || p.Key == name {
			return p, true
		}
	}
	return Param{}, false
}

// notOwned is the error of a parameter set on an architecture without it.
func notOwned(t archTable, name, arch string) error {
	key := strings.ReplaceAll(name, "-", "_")
	var owners []string
	for _, a := range t {
		if _, ok := a.param(key); ok && !slices.Contains(owners, a.Name) {
			owners = append(owners, a.Name)
		}
	}
	if len(owners) == 0 {
		// A key of a hand-edited or foreign config: named as written.
		return fmt.Errorf("unknown key %q: no model has this hyper-parameter (%s has %s)", name, arch, paramList(t, arch))
	}
	return config.Errorf("%s applies to {Arch} %s only, not %s", config.Name(optField(name)), strings.Join(owners, ", "), arch)
}

// paramList names an architecture's parameters for a message.
func paramList(t archTable, arch string) string {
	a, err := t.lookup(arch)
	if err != nil || len(a.Params) == 0 {
		return "none"
	}
	var fs []string
	for _, p := range a.Params {
		fs = append(fs, p.Key)
	}
	return strings.Join(fs, ", ")
}

// validateOpts checks every key of c.Opts against c's architecture: owned,
// of its kind.
func (c Config) validateOpts(t archTable, a Arch) error {
	for _, kv := range c.Opts.entries() {
		p, ok := a.param(kv[0])
		if !ok {
			return notOwned(t, kv[0], a.Name)
		}
		text, _ := c.Opts.Text(kv[0])
		if _, err := p.literal(text); err != nil {
			return err
		}
	}
	return nil
}

// ArchParams returns the hyper-parameters of the built-in architectures,
// each key once (architectures that share a key, GAT's and GATv2's heads,
// share its kind, default and help), in table order: what a command line
// declares flags for.
func ArchParams() []Param {
	var ps []Param
	for _, a := range builtinArchs() {
		for _, p := range a.Params {
			if !slices.ContainsFunc(ps, func(q Param) bool { return q.Key == p.Key }) {
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// ArchOwns reports whether the built-in architecture arch ("" is sage)
// has the parameter of flag name.
func ArchOwns(arch, flag string) bool {
	a, err := lookupArch(arch)
	if err != nil {
		return false
	}
	_, ok := a.param(flag)
	return ok
}

// IsArchParam reports whether flag name is some built-in architecture's
// parameter.
func IsArchParam(flag string) bool {
	return slices.ContainsFunc(ArchParams(), func(p Param) bool { return p.Flag() == flag })
}

// configJSON is Config without its methods, for encoding/json.
type configJSON Config

// MarshalJSON writes the config's fields, then each of Opts' keys at the
// top level.
func (c Config) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(configJSON(c))
	if err != nil || c.Opts == "" {
		return b, err
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // without the closing brace
	for _, kv := range c.Opts.entries() {
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(kv[0])
		buf.Write(k)
		buf.WriteByte(':')
		buf.WriteString(kv[1])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads the config's fields; every other top-level key is
// one of Opts (Validate refuses keys the architecture does not own).
func (c *Config) UnmarshalJSON(b []byte) error {
	var plain configJSON
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	known := configKeys()
	var kv [][2]string
	for k, raw := range all {
		if known[k] {
			continue
		}
		var lit bytes.Buffer
		if err := json.Compact(&lit, raw); err != nil {
			return fmt.Errorf("model config: key %q: %w", k, err)
		}
		if strings.ContainsAny(k, ",=") || strings.Contains(lit.String(), ",") || lit.Len() == 0 || lit.Bytes()[0] == '{' || lit.Bytes()[0] == '[' {
			return fmt.Errorf("model config: key %q: an architecture parameter is a number, boolean or name", k)
		}
		kv = append(kv, [2]string{k, lit.String()})
	}
	plain.Opts = join(kv)
	*c = Config(plain)
	return nil
}

// configKeys are the JSON keys of Config's own fields.
func configKeys() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[configJSON]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}
