package mcp_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"mnemo/engine"
	"mnemo/engine/sessions"
	"mnemo/mcp"
)

// TestSchemaBoundsAreTheEngines: every bound the engine declares is the
// one the tool's schema states, so a client is refused by the schema
// exactly where the engine would refuse it; and every description that
// names a range names the schema's own.
func TestSchemaBoundsAreTheEngines(t *testing.T) {
	e := newEnv(t, false, nil, mcp.Options{Sessions: newSessions(t)})
	res, err := e.cs.ListTools(context.Background(), nil)
	must(t, err)
	inputs := map[string]*jsonschema.Schema{}
	for _, tl := range res.Tools {
		var s jsonschema.Schema
		b, _ := json.Marshal(tl.InputSchema)
		must(t, json.Unmarshal(b, &s))
		inputs[tl.Name] = &s
	}
	tests := []struct {
		tool, arg string
		max       int
		items     bool // a bound on the number of items, not the value
	}{
		{"SearchMemories", "page", engine.MaxPage, false},
		{"SearchMemories", "pageSize", engine.MaxPageSize, false},
		{"SearchMemories", "tags", engine.MaxTags, true},
		{"WriteMemory", "tags", engine.MaxTags, true},
		{"SearchSessions", "limit", sessions.MaxLimit, false},
		{"SearchSessions", "maxHits", sessions.MaxHits, false},
		{"GetSession", "limit", sessions.MaxMessages, false},
		{"GetMessage", "context", sessions.MaxContext, false},
		{"ListSessions", "page", engine.MaxPage, false},
		{"ListSessions", "pageSize", sessions.MaxLimit, false},
		{"BuildContext", "depth", engine.MaxContextDepth, false},
		{"BuildContext", "maxEntities", engine.MaxEntities, false},
		{"Visualize", "maxNodes", engine.MaxVisualNodes, false},
		{"FindSimilarConcepts", "maxResults", engine.MaxSimilar, false},
	}
	for _, tt := range tests {
		in := inputs[tt.tool]
		if in == nil || in.Properties[tt.arg] == nil {
			t.Errorf("%s has no argument %s", tt.tool, tt.arg)
			continue
		}
		p := in.Properties[tt.arg]
		var got int
		switch {
		case tt.items && p.MaxItems != nil:
			got = *p.MaxItems
		case !tt.items && p.Maximum != nil:
			got = int(*p.Maximum)
		}
		if got != tt.max {
			t.Errorf("%s %s: the schema's bound is %d, the engine's %d", tt.tool, tt.arg, got, tt.max)
		}
	}
	rng := regexp.MustCompile(`\b(\d+) to (\d+)\b`)
	for name, in := range inputs {
		for arg, p := range in.Properties {
			m := rng.FindStringSubmatch(p.Description)
			if m == nil || p.Maximum == nil {
				continue
			}
			lo, _ := strconv.Atoi(m[1])
			hi, _ := strconv.Atoi(m[2])
			if p.Minimum == nil || float64(lo) != *p.Minimum || float64(hi) != *p.Maximum {
				t.Errorf("%s %s: the description says %s to %s, the schema %v to %v", name, arg, m[1], m[2], p.Minimum, *p.Maximum)
			}
		}
	}
}

// TestEngineErrorsSayTheBounds: the engine's refusals name the bounds it
// declares, so what a client reads matches the schema.
func TestEngineErrorsSayTheBounds(t *testing.T) {
	for _, tt := range []struct {
		err error
		max int
	}{
		{engine.ErrBadPage, engine.MaxPage},
		{engine.ErrBadPageSize, engine.MaxPageSize},
		{sessions.ErrBadLimit, sessions.MaxLimit},
		{sessions.ErrBadMaxHits, sessions.MaxHits},
		{sessions.ErrBadContext, sessions.MaxContext},
	} {
		if !regexp.MustCompile(`\band ` + strconv.Itoa(tt.max) + `$`).MatchString(tt.err.Error()) {
			t.Errorf("%q does not end with the engine's bound %d", tt.err, tt.max)
		}
	}
}
