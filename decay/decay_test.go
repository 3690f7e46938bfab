package decay

import (
	"math"
	"strings"
	"testing"
	"time"
)

// env builds a lookup from a map, standing in for os.LookupEnv.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

const day = 24 * time.Hour

func TestDefault(t *testing.T) {
	c := Default()
	want := Config{GraceSequentialDays: 7, GraceWorkflowsDays: 14, GraceDefaultDays: 28, HalfLifeDays: 30, Function: Exponential, Strength: DefaultStrength}
	if c != want {
		t.Fatalf("Default() = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
}

func TestFromLookup(t *testing.T) {
	def := Default()
	with := func(f func(*Config)) Config {
		c := def
		f(&c)
		return c
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr []string // substrings the error must contain; nil means no error
	}{
		{name: "empty environment", env: nil, want: def},
		{name: "unrelated variables", env: map[string]string{"MAENIFOLD_ROOT": "/x"}, want: def},
		{name: "empty string is unset", env: map[string]string{EnvHalfLife: "", EnvFunction: ""}, want: def},
		{name: "blank is unset", env: map[string]string{EnvGraceDefault: "  \t"}, want: def},

		{name: "sequential grace", env: map[string]string{EnvGraceSequential: "3"}, want: with(func(c *Config) { c.GraceSequentialDays = 3 })},
		{name: "sequential grace zero", env: map[string]string{EnvGraceSequential: "0"}, want: with(func(c *Config) { c.GraceSequentialDays = 0 })},
		{name: "sequential grace negative", env: map[string]string{EnvGraceSequential: "-1"},
			wantErr: []string{EnvGraceSequential + `="-1": want a number of days >= 0`}},
		{name: "workflows grace fractional, padded", env: map[string]string{EnvGraceWorkflows: " 10.5\n"}, want: with(func(c *Config) { c.GraceWorkflowsDays = 10.5 })},
		{name: "workflows grace word", env: map[string]string{EnvGraceWorkflows: "two weeks"},
			wantErr: []string{EnvGraceWorkflows + `="two weeks": want a number of days >= 0`}},
		{name: "default grace", env: map[string]string{EnvGraceDefault: "90"}, want: with(func(c *Config) { c.GraceDefaultDays = 90 })},
		{name: "default grace NaN", env: map[string]string{EnvGraceDefault: "NaN"},
			wantErr: []string{EnvGraceDefault + `="NaN"`}},
		{name: "default grace infinite", env: map[string]string{EnvGraceDefault: "+Inf"},
			wantErr: []string{EnvGraceDefault + `="+Inf"`}},

		{name: "half-life", env: map[string]string{EnvHalfLife: "14"}, want: with(func(c *Config) { c.HalfLifeDays = 14 })},
		{name: "half-life word", env: map[string]string{EnvHalfLife: "abc"},
			wantErr: []string{EnvHalfLife + `="abc": want a positive number of days`}},
		{name: "half-life zero", env: map[string]string{EnvHalfLife: "0"},
			wantErr: []string{EnvHalfLife + `="0": want a positive number of days`}},
		{name: "half-life negative", env: map[string]string{EnvHalfLife: "-30"},
			wantErr: []string{EnvHalfLife + `="-30"`}},

		{name: "function exponential", env: map[string]string{EnvFunction: "exponential"}, want: def},
		{name: "function power-law", env: map[string]string{EnvFunction: "power-law"}, want: with(func(c *Config) { c.Function = PowerLaw })},
		{name: "function case-insensitive", env: map[string]string{EnvFunction: "Power-Law"}, want: with(func(c *Config) { c.Function = PowerLaw })},
		{name: "function powerlaw", env: map[string]string{EnvFunction: "powerlaw"}, want: with(func(c *Config) { c.Function = PowerLaw })},
		{name: "function power_law", env: map[string]string{EnvFunction: " POWER_LAW "}, want: with(func(c *Config) { c.Function = PowerLaw })},
		{name: "function EXPONENTIAL", env: map[string]string{EnvFunction: "EXPONENTIAL"}, want: def},
		{name: "function unknown", env: map[string]string{EnvFunction: "linear"},
			wantErr: []string{EnvFunction + `="linear": want "exponential" or "power-law"`}},

		{name: "all set", env: map[string]string{
			EnvGraceSequential: "1", EnvGraceWorkflows: "2", EnvGraceDefault: "3", EnvHalfLife: "4", EnvFunction: "power-law", EnvStrength: "0.25",
		}, want: Config{1, 2, 3, 4, PowerLaw, 0.25}},
		{name: "strength 1", env: map[string]string{EnvStrength: "1"}, want: with(func(c *Config) { c.Strength = 1 })},
		{name: "strength 0", env: map[string]string{EnvStrength: "0"}, want: with(func(c *Config) { c.Strength = 0 })},
		{name: "strength above 1", env: map[string]string{EnvStrength: "1.5"},
			wantErr: []string{EnvStrength + `="1.5": want a number from 0 to 1`}},
		{name: "strength not a number", env: map[string]string{EnvStrength: "strong"},
			wantErr: []string{EnvStrength}},
		{name: "every error reported", env: map[string]string{EnvHalfLife: "abc", EnvFunction: "linear", EnvGraceSequential: "x"},
			wantErr: []string{EnvHalfLife, EnvFunction, EnvGraceSequential}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromLookup(env(tt.env))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("FromLookup() = %+v, nil; want error containing %q", got, tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if got != (Config{}) {
					t.Errorf("FromLookup() on error returned %+v, want zero Config", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromLookup() error: %v", err)
			}
			if got != tt.want {
				t.Errorf("FromLookup() = %+v, want %+v", got, tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("result does not validate: %v", err)
			}
		})
	}
}

func TestFromLookupNil(t *testing.T) {
	got, err := FromLookup(nil)
	if err != nil || got != Default() {
		t.Fatalf("FromLookup(nil) = %+v, %v; want defaults", got, err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string // "" means valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"zero grace", func(c *Config) { c.GraceDefaultDays = 0 }, ""},
		{"power-law", func(c *Config) { c.Function = PowerLaw }, ""},
		{"negative sequential grace", func(c *Config) { c.GraceSequentialDays = -1 }, EnvGraceSequential},
		{"NaN workflows grace", func(c *Config) { c.GraceWorkflowsDays = math.NaN() }, EnvGraceWorkflows},
		{"infinite default grace", func(c *Config) { c.GraceDefaultDays = math.Inf(1) }, EnvGraceDefault},
		{"zero half-life", func(c *Config) { c.HalfLifeDays = 0 }, EnvHalfLife + "=0: want a positive number of days"},
		{"empty function", func(c *Config) { c.Function = "" }, EnvFunction},
		{"unknown function", func(c *Config) { c.Function = "linear" }, `want "exponential" or "power-law"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.mutate(&c)
			err := c.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("Validate() = nil, want error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Fatalf("Validate() = %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	names := []string{EnvGraceSequential, EnvGraceWorkflows, EnvGraceDefault, EnvHalfLife, EnvFunction, EnvStrength}
	tests := []struct {
		name        string
		env         map[string]string
		wantValues  []string
		wantSources []string
	}{
		{
			name:        "all defaults",
			env:         nil,
			wantValues:  []string{"7", "14", "28", "30", "exponential", "0.02"},
			wantSources: []string{"default", "default", "default", "default", "default", "default"},
		},
		{
			name:        "some from env, canonicalised",
			env:         map[string]string{EnvGraceWorkflows: " 21.0 ", EnvFunction: "powerlaw", EnvHalfLife: "", EnvStrength: "1"},
			wantValues:  []string{"7", "21", "28", "30", "power-law", "1"},
			wantSources: []string{"default", "env", "default", "default", "env", "env"},
		},
		{
			name:        "invalid shown as given",
			env:         map[string]string{EnvHalfLife: "abc"},
			wantValues:  []string{"7", "14", "28", "abc", "exponential", "0.02"},
			wantSources: []string{"default", "default", "default", "env", "default", "default"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Settings(env(tt.env))
			if len(got) != len(names) {
				t.Fatalf("Settings() returned %d settings, want %d", len(got), len(names))
			}
			for i, s := range got {
				if s.Name != names[i] {
					t.Errorf("setting %d: Name = %q, want %q", i, s.Name, names[i])
				}
				if s.Value != tt.wantValues[i] {
					t.Errorf("%s: Value = %q, want %q", s.Name, s.Value, tt.wantValues[i])
				}
				if s.Source != tt.wantSources[i] {
					t.Errorf("%s: Source = %q, want %q", s.Name, s.Source, tt.wantSources[i])
				}
				if s.Help == "" {
					t.Errorf("%s: empty Help", s.Name)
				}
			}
		})
	}
}

func TestTierOf(t *testing.T) {
	tests := []struct {
		path string
		want Tier
	}{
		{"thinking/sequential/2025-03-01-session.md", TierSequential},
		{"thinking/sequential/2025/03/deep.md", TierSequential},
		{"./thinking/sequential/a.md", TierSequential},
		{"/thinking/sequential/a.md", TierSequential},
		{`thinking\sequential\a.md`, TierSequential},
		{`.\thinking\Sequential\a.md`, TierSequential},
		{"Thinking/SEQUENTIAL/a.md", TierSequential},
		{"thinking//sequential/a.md", TierSequential},
		{"thinking/workflows/release.md", TierWorkflows},
		{"thinking/workflow/release.md", TierWorkflows},
		{"thinking/Workflows/nested/deeper/release.md", TierWorkflows},
		{`thinking\workflow\release.md`, TierWorkflows},
		{"thinking/other/a.md", TierDefault},
		{"thinking/a.md", TierDefault},
		{"thinking/sequential.md", TierDefault},
		{"thinking/sequentially/a.md", TierDefault},
		{"notes/thinking/sequential/a.md", TierDefault},
		{"decisions/adr-001.md", TierDefault},
		{"sequential/a.md", TierDefault},
		{"", TierDefault},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := TierOf(tt.path); got != tt.want {
				t.Errorf("TierOf(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

func TestGrace(t *testing.T) {
	c := Default()
	tests := []struct {
		path string
		want time.Duration
	}{
		{"thinking/sequential/a.md", 7 * day},
		{"thinking/workflows/a.md", 14 * day},
		{"thinking/workflow/a.md", 14 * day},
		{"howto/systemd.md", 28 * day},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := c.Grace(tt.path); got != tt.want {
				t.Errorf("Grace(%q) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
	t.Run("fractional days", func(t *testing.T) {
		c := Config{GraceDefaultDays: 0.5, HalfLifeDays: 1, Function: Exponential}
		if got := c.Grace("a.md"); got != 12*time.Hour {
			t.Errorf("Grace = %v, want 12h", got)
		}
	})
	t.Run("negative counts as none", func(t *testing.T) {
		c := Config{GraceDefaultDays: -3}
		if got := c.Grace("a.md"); got != 0 {
			t.Errorf("Grace = %v, want 0", got)
		}
	})
	t.Run("huge saturates", func(t *testing.T) {
		c := Config{GraceDefaultDays: 1e300}
		if got := c.Grace("a.md"); got != time.Duration(math.MaxInt64) {
			t.Errorf("Grace = %v, want max duration", got)
		}
	})
}

func TestWeight(t *testing.T) {
	now := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	exp := Default()
	pow := Default()
	pow.Function = PowerLaw
	const seq, wf, other = "thinking/sequential/s.md", "thinking/workflows/w.md", "decisions/d.md"
	ago := func(d time.Duration) time.Time { return now.Add(-d) }

	tests := []struct {
		name string
		c    Config
		path string
		ref  time.Time
		want float64
	}{
		{"zero ref", exp, other, time.Time{}, 1},
		{"ref in the future", exp, other, now.Add(48 * time.Hour), 1},
		{"ref equals now", exp, other, now, 1},
		{"inside grace", exp, other, ago(10 * day), 1},
		{"exactly grace, default tier", exp, other, ago(28 * day), 1},
		{"exactly grace, sequential", exp, seq, ago(7 * day), 1},
		{"exactly grace, workflows", exp, wf, ago(14 * day), 1},
		{"exactly grace, power-law", pow, other, ago(28 * day), 1},

		{"exp: grace + H", exp, other, ago((28 + 30) * day), 0.5},
		{"exp: sequential grace + H", exp, seq, ago((7 + 30) * day), 0.5},
		{"exp: workflows grace + H", exp, wf, ago((14 + 30) * day), 0.5},
		{"exp: grace + 2H", exp, other, ago((28 + 60) * day), 0.25},
		{"exp: grace + H/2", exp, other, ago((28 + 15) * day), math.Sqrt(0.5)},

		{"power: grace + H", pow, other, ago((28 + 30) * day), 0.5},
		{"power: sequential grace + H", pow, seq, ago((7 + 30) * day), 0.5},
		{"power: grace + 2H", pow, other, ago((28 + 60) * day), 1 / math.Sqrt(7)},
		{"power: grace + 10H", pow, other, ago((28 + 300) * day), 1 / math.Sqrt(31)},

		{"zero config: no grace, default half-life", Config{}, other, ago(30 * day), 0.5},
		{"unknown function treated as exponential", Config{HalfLifeDays: 10, Function: "linear"}, other, ago(10 * day), 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.c.Weight(tt.path, tt.ref, now)
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Weight(%q, now-%v) = %.15f, want %.15f", tt.path, now.Sub(tt.ref), got, tt.want)
			}
		})
	}
}

func TestWeightShape(t *testing.T) {
	now := time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)
	exp := Default()
	pow := Default()
	pow.Function = PowerLaw
	const p = "research/r.md"
	grace := exp.Grace(p)

	t.Run("power-law tail is longer after one half-life", func(t *testing.T) {
		for _, halfLives := range []float64{1.5, 2, 5, 20} {
			ref := now.Add(-grace - time.Duration(halfLives*30*float64(day)))
			e, w := exp.Weight(p, ref, now), pow.Weight(p, ref, now)
			if !(w > e) {
				t.Errorf("at %.1f half-lives power-law %.4f <= exponential %.4f", halfLives, w, e)
			}
		}
	})
	t.Run("values at 2H", func(t *testing.T) {
		ref := now.Add(-grace - 60*day)
		if got := exp.Weight(p, ref, now); got != 0.25 {
			t.Errorf("exponential at 2H = %v, want 0.25", got)
		}
		if got := pow.Weight(p, ref, now); math.Abs(got-0.378) > 0.001 {
			t.Errorf("power-law at 2H = %v, want ≈ 0.378", got)
		}
	})
	t.Run("monotone non-increasing and in (0,1]", func(t *testing.T) {
		for _, c := range []Config{exp, pow} {
			prev := 1.0
			// Past ~292 years now.Sub saturates; AddDate keeps the loop itself exact.
			for d := 0; d <= 365*400; d += 7 {
				w := c.Weight(p, now.AddDate(0, 0, -d), now)
				if !(w > 0 && w <= 1) {
					t.Fatalf("%s: weight %v at %d days is outside (0,1]", c.Function, w, d)
				}
				if w > prev {
					t.Fatalf("%s: weight rose from %v to %v at %d days", c.Function, prev, w, d)
				}
				prev = w
			}
		}
	})
	t.Run("ancient memories stay positive", func(t *testing.T) {
		ancient := time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)
		c := Config{HalfLifeDays: 0.001, Function: Exponential}
		if w := c.Weight(p, ancient, now); !(w > 0) {
			t.Errorf("Weight = %v, want > 0", w)
		}
	})
}

func TestReference(t *testing.T) {
	read := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	mtime := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	var zero time.Time
	tests := []struct {
		name                   string
		lastRead, created, mod time.Time
		want                   time.Time
	}{
		{"read wins", read, created, mtime, read},
		{"read wins even if older than created", created, read, mtime, created},
		{"created over mtime", zero, created, mtime, created},
		{"mtime as last resort", zero, zero, mtime, mtime},
		{"all zero", zero, zero, zero, zero},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Reference(tt.lastRead, tt.created, tt.mod); !got.Equal(tt.want) {
				t.Errorf("Reference() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFactor(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := now.Add(-(28 + 30) * 24 * time.Hour) // grace + one half-life: weight 0.5
	tests := []struct {
		name     string
		strength float64
		ref      time.Time
		want     float64
	}{
		{"pure multiplication", 1, old, 0.5},
		{"off", 0, old, 1},
		{"half strength", 0.5, old, 0.75},
		{"within grace is 1 at any strength", 1, now.Add(-24 * time.Hour), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			c.Strength = tt.strength
			if got := c.Factor("notes/a.md", tt.ref, now); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Factor() = %v, want %v", got, tt.want)
			}
		})
	}
}
