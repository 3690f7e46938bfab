// Package decay computes recency weights: how much a memory's search score
// still counts given how long ago it was last touched.
//
// A memory keeps full weight (1) for a grace period, then fades with a chosen
// half-life. The grace period depends on where the memory lives, because
// memories age at different speeds: a step-by-step reasoning session under
// thinking/sequential/ is scratch work that is stale within a week, a workflow
// note under thinking/workflows/ stays useful for a sprint or two, and
// everything else (decisions, how-tos, people) is long-lived knowledge.
//
// Every function here is pure: a weight depends only on the configuration,
// the memory's path, its reference time and the clock passed in, so results
// are reproducible and tests need no fake clock; even the environment
// arrives as a lookup function (FromLookup). The variable names are maenifold's, so a vault configured for maenifold decays
// the same way here.
package decay

import (
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"
)

// Function is the shape of the curve a weight follows after the grace period.
type Function string

const (
	// Exponential halves the weight every half-life: 0.5^(t/H). It forgets
	// steadily, so a year-old memory barely registers.
	Exponential Function = "exponential"
	// PowerLaw is (1 + 3t/H)^(-0.5): also 0.5 at one half-life, but with a
	// long tail, so old memories keep a noticeable weight. This matches how
	// human recall fades and suits vaults where old decisions still matter.
	PowerLaw Function = "power-law"
)

// The environment variables FromLookup reads, exported so that help texts and
// error messages elsewhere can name them without retyping them.
const (
	EnvGraceSequential = "MAENIFOLD_DECAY_GRACE_DAYS_SEQUENTIAL"
	EnvGraceWorkflows  = "MAENIFOLD_DECAY_GRACE_DAYS_WORKFLOWS"
	EnvGraceDefault    = "MAENIFOLD_DECAY_GRACE_DAYS_DEFAULT"
	EnvHalfLife        = "MAENIFOLD_DECAY_HALF_LIFE_DAYS"
	EnvFunction        = "MAENIFOLD_DECAY_FUNCTION"
	EnvStrength        = "MAENIFOLD_DECAY_STRENGTH"
)

// The accepted forms, shared by parse errors and Validate so that both say
// the same thing.
const (
	wantGrace    = "want a number of days >= 0"
	wantHalfLife = "want a positive number of days"
	wantFunction = `want "exponential" or "power-law"`
	wantStrength = "want a number from 0 to 1"
)

// Config is the recency-decay configuration. Fill it with Default or
// FromLookup; a literal works too, but should pass Validate.
type Config struct {
	GraceSequentialDays float64  // MAENIFOLD_DECAY_GRACE_DAYS_SEQUENTIAL, default 7
	GraceWorkflowsDays  float64  // MAENIFOLD_DECAY_GRACE_DAYS_WORKFLOWS, default 14
	GraceDefaultDays    float64  // MAENIFOLD_DECAY_GRACE_DAYS_DEFAULT, default 28
	HalfLifeDays        float64  // MAENIFOLD_DECAY_HALF_LIFE_DAYS, default 30
	Function            Function // MAENIFOLD_DECAY_FUNCTION, default exponential
	// Strength is how far decay may pull a score down: a search multiplies
	// each score by 1 − s + s·w (see Factor). 1 is maenifold's pure
	// multiplication, where a year-old exact match scores ~0.0003 and loses
	// to any recent near-miss; the default keeps relevance first and
	// recency as a strong tie-breaker. MAENIFOLD_DECAY_STRENGTH.
	Strength float64
}

// Default returns maenifold's defaults: 7, 14 and 28 days of grace for
// sequential thinking, workflows and everything else, then a 30-day
// exponential half-life.
func Default() Config {
	return Config{
		GraceSequentialDays: 7,
		GraceWorkflowsDays:  14,
		GraceDefaultDays:    28,
		HalfLifeDays:        30,
		Function:            Exponential,
		Strength:            DefaultStrength,
	}
}

// DefaultStrength was chosen on the benchmark's LoCoMo sets, the ones
// with real dates (docs/benchmarks.md).
const DefaultStrength = 0.02

// Factor is what a search multiplies a memory's score by: 1 − s + s·w,
// with w = Weight(path, ref, now) and s the Strength. It lies in [1 − s, 1].
func (c Config) Factor(path string, ref, now time.Time) float64 {
	s := c.Strength
	if !isFinite(s) || s < 0 || s > 1 {
		s = DefaultStrength
	}
	return 1 - s + s*c.Weight(path, ref, now)
}

// Validate reports every out-of-range field at once, each naming its
// environment variable, so a user fixes a bad setup in one pass.
func (c Config) Validate() error {
	var errs []error
	for _, g := range []struct {
		name string
		days float64
	}{
		{EnvGraceSequential, c.GraceSequentialDays},
		{EnvGraceWorkflows, c.GraceWorkflowsDays},
		{EnvGraceDefault, c.GraceDefaultDays},
	} {
		if !isFinite(g.days) || g.days < 0 {
			errs = append(errs, fmt.Errorf("%s=%v: %s", g.name, g.days, wantGrace))
		}
	}
	if !isFinite(c.HalfLifeDays) || c.HalfLifeDays <= 0 {
		errs = append(errs, fmt.Errorf("%s=%v: %s", EnvHalfLife, c.HalfLifeDays, wantHalfLife))
	}
	if _, ok := parseFunction(string(c.Function)); !ok {
		errs = append(errs, fmt.Errorf("%s=%q: %s", EnvFunction, c.Function, wantFunction))
	}
	if !isFinite(c.Strength) || c.Strength < 0 || c.Strength > 1 {
		errs = append(errs, fmt.Errorf("%s=%v: %s", EnvStrength, c.Strength, wantStrength))
	}
	return errors.Join(errs...)
}

// FromLookup reads the MAENIFOLD_DECAY_* variables through lookup — the
// front end passes os.LookupEnv, tests a map — so the package stays pure and
// reads no process state of its own. Unset and empty variables take their defaults;
// values are trimmed of surrounding whitespace. Every invalid variable is
// reported, joined into one error, and the returned Config is then the zero
// value. A nil lookup means an empty environment.
func FromLookup(lookup func(string) (string, bool)) (Config, error) {
	c := Default()
	var errs []error
	for _, v := range vars {
		raw, ok := get(lookup, v.name)
		if !ok {
			continue
		}
		if err := v.set(&c, raw); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", v.name, raw, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Setting is one variable's effective value and where it came from ("env" or "default").
type Setting struct{ Name, Value, Source, Help string }

// Settings describes every MAENIFOLD_DECAY_* variable, in a stable order (the order of
// Config's fields), for a "config" command or a status page. Value is the
// effective value in canonical form ("powerlaw" shows as "power-law"). An
// invalid variable is shown as given, with Source "env", so the user sees
// what they set; FromLookup is what reports it as an error.
func Settings(lookup func(string) (string, bool)) []Setting {
	def := Default()
	out := make([]Setting, 0, len(vars))
	for _, v := range vars {
		s := Setting{Name: v.name, Value: v.show(def), Source: "default", Help: v.help}
		if raw, ok := get(lookup, v.name); ok {
			s.Source = "env"
			s.Value = raw
			var c Config
			if v.set(&c, raw) == nil {
				s.Value = v.show(c)
			}
		}
		out = append(out, s)
	}
	return out
}

// variable ties one environment variable to its Config field, so FromLookup
// and Settings cannot disagree about names, order or parsing.
type variable struct {
	name string
	help string
	set  func(c *Config, raw string) error
	show func(c Config) string
}

var vars = []variable{
	{
		name: EnvGraceSequential,
		help: "days a thinking/sequential/ memory keeps full weight",
		set:  func(c *Config, raw string) error { return parseGrace(raw, &c.GraceSequentialDays) },
		show: func(c Config) string { return formatDays(c.GraceSequentialDays) },
	},
	{
		name: EnvGraceWorkflows,
		help: "days a thinking/workflows/ memory keeps full weight",
		set:  func(c *Config, raw string) error { return parseGrace(raw, &c.GraceWorkflowsDays) },
		show: func(c Config) string { return formatDays(c.GraceWorkflowsDays) },
	},
	{
		name: EnvGraceDefault,
		help: "days any other memory keeps full weight",
		set:  func(c *Config, raw string) error { return parseGrace(raw, &c.GraceDefaultDays) },
		show: func(c Config) string { return formatDays(c.GraceDefaultDays) },
	},
	{
		name: EnvHalfLife,
		help: "days after the grace period at which a memory's weight is 0.5",
		set: func(c *Config, raw string) error {
			d, err := parseDays(raw)
			if err != nil || d <= 0 {
				return errors.New(wantHalfLife)
			}
			c.HalfLifeDays = d
			return nil
		},
		show: func(c Config) string { return formatDays(c.HalfLifeDays) },
	},
	{
		name: EnvFunction,
		help: "decay curve after the grace period: exponential, or power-law for a longer tail",
		set: func(c *Config, raw string) error {
			f, ok := parseFunction(raw)
			if !ok {
				return errors.New(wantFunction)
			}
			c.Function = f
			return nil
		},
		show: func(c Config) string { return string(c.Function) },
	},
	{
		name: EnvStrength,
		help: "how far decay may lower a score: 1 − s + s·weight; 1 is pure multiplication, 0 turns decay off",
		set: func(c *Config, raw string) error {
			s, err := strconv.ParseFloat(raw, 64)
			if err != nil || !isFinite(s) || s < 0 || s > 1 {
				return errors.New(wantStrength)
			}
			c.Strength = s
			return nil
		},
		show: func(c Config) string { return strconv.FormatFloat(c.Strength, 'f', -1, 64) },
	},
}

// get returns a variable's trimmed value; unset, empty and all-blank values
// all count as unset, because shells and .env files produce "" for
// "declared but not set".
func get(lookup func(string) (string, bool), name string) (string, bool) {
	if lookup == nil {
		return "", false
	}
	raw, ok := lookup(name)
	raw = strings.TrimSpace(raw)
	return raw, ok && raw != ""
}

func parseGrace(raw string, dst *float64) error {
	d, err := parseDays(raw)
	if err != nil || d < 0 {
		return errors.New(wantGrace)
	}
	*dst = d
	return nil
}

// parseDays accepts any finite decimal number; NaN and infinities are
// refused because they would make every weight meaningless.
func parseDays(raw string) (float64, error) {
	d, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return 0, err
	}
	if !isFinite(d) {
		return 0, errors.New("not a finite number")
	}
	return d, nil
}

func formatDays(d float64) string { return strconv.FormatFloat(d, 'g', -1, 64) }

// parseFunction accepts the spellings people actually type for the power
// law, since the canonical "power-law" is easy to get subtly wrong.
func parseFunction(raw string) (Function, bool) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "exponential":
		return Exponential, true
	case "power-law", "powerlaw", "power_law":
		return PowerLaw, true
	}
	return "", false
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Tier is the grace-period class of a memory, decided by its folder.
type Tier string

const (
	TierSequential Tier = "sequential" // thinking/sequential/…
	TierWorkflows  Tier = "workflows"  // thinking/workflows/… or thinking/workflow/…
	TierDefault    Tier = "default"    // everything else
)

// TierOf classifies a path relative to the memory folder. It tolerates the
// shapes paths arrive in from different callers: a leading "./" or "/",
// Windows backslashes, and any letter case in the folder names. Only the
// top-level thinking/ folder counts; notes/thinking/sequential/x.md is an
// ordinary memory.
func TierOf(p string) Tier {
	if !mentionsThinking(p) {
		return TierDefault // the common case, without allocating
	}
	p = strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
	p = strings.TrimLeft(path.Clean("/"+p), "/")
	parts := strings.Split(p, "/")
	// A file must sit inside the folder: "thinking/sequential" alone is the
	// folder itself, or a file that merely has that name.
	if len(parts) < 3 || parts[0] != "thinking" {
		return TierDefault
	}
	switch parts[1] {
	case "sequential":
		return TierSequential
	case "workflows", "workflow":
		return TierWorkflows
	}
	return TierDefault
}

// mentionsThinking reports whether p contains "thinking" in any case.
func mentionsThinking(p string) bool {
	const w = "thinking"
	for i := 0; i+len(w) <= len(p); i++ {
		if (p[i] == 't' || p[i] == 'T') && strings.EqualFold(p[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

// Grace is how long the memory at path keeps full weight. A negative or
// non-finite grace in an unvalidated Config counts as none.
func (c Config) Grace(path string) time.Duration {
	var days float64
	switch TierOf(path) {
	case TierSequential:
		days = c.GraceSequentialDays
	case TierWorkflows:
		days = c.GraceWorkflowsDays
	default:
		days = c.GraceDefaultDays
	}
	if !(days > 0) { // also catches NaN
		return 0
	}
	d := days * float64(24*time.Hour)
	if d >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// Weight is 1 within the grace period; after it, with t = age − grace and
// H = half-life: exponential 0.5^(t/H); power-law (1 + 3t/H)^(-0.5).
//
// A zero ref (nothing to age from) or one after now (clock skew, a created
// date typed in the future) gives 1: an unknown age must never bury a
// memory. The result is always in (0, 1], even centuries out, so a weight
// multiplied into a score never turns a match into a non-match. Weight does
// not fail on an unvalidated Config: a half-life that is not positive means
// the default 30 days, and an unknown function means exponential.
func (c Config) Weight(path string, ref, now time.Time) float64 {
	if ref.IsZero() || !ref.Before(now) {
		return 1
	}
	age := now.Sub(ref) // saturates rather than overflows
	grace := c.Grace(path)
	if age <= grace {
		return 1
	}
	t := float64(age-grace) / float64(24*time.Hour)
	h := c.HalfLifeDays
	if !isFinite(h) || h <= 0 {
		h = Default().HalfLifeDays
	}
	var w float64
	if f, _ := parseFunction(string(c.Function)); f == PowerLaw {
		w = math.Pow(1+3*t/h, -0.5)
	} else {
		w = math.Exp2(-t / h)
	}
	return math.Max(w, math.SmallestNonzeroFloat64)
}

// Reference picks the time a memory ages from: last explicit read if non-zero, else created if non-zero, else mtime.
//
// A read counts first because an agent reading a memory is evidence it is
// still useful; created beats mtime because a file copied, synced or
// touched by an editor gets a new mtime without becoming newer knowledge.
func Reference(lastRead, created, mtime time.Time) time.Time {
	switch {
	case !lastRead.IsZero():
		return lastRead
	case !created.IsZero():
		return created
	}
	return mtime
}
