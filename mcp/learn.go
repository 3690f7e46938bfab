package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every tool takes maenifold's learn argument: learn: true returns the
// tool's documentation instead of running it, as maenifold does (its tools
// return their help file). The documentation is made from the tool's own
// description and input schema, so it cannot drift from what the tool
// accepts.

const learnArg = "learn"

// addLearn adds the learn argument to a tool's input schema.
func addLearn(in *jsonschema.Schema) {
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{}
	}
	in.Properties[learnArg] = &jsonschema.Schema{
		Type:        "boolean",
		Description: "true: return this tool's documentation instead of running it",
		Default:     json.RawMessage("false"),
	}
	if in.PropertyOrder != nil {
		in.PropertyOrder = append(in.PropertyOrder, learnArg)
	}
}

// takeLearn removes learn from raw arguments and reports its value; the
// other arguments are decoded as usual. A learn that is not a boolean is
// refused like any other argument of the wrong type.
func takeLearn(raw json.RawMessage) (json.RawMessage, bool, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' || !bytes.Contains(t, []byte(`"`+learnArg+`"`)) {
		return raw, false, nil // the decoder says what is wrong with it, if anything
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(t, &obj) != nil {
		return raw, false, nil
	}
	val, ok := obj[learnArg]
	if !ok {
		return raw, false, nil
	}
	var learn bool
	if v := bytes.TrimSpace(val); string(v) != "null" && json.Unmarshal(v, &learn) != nil {
		return nil, false, fmt.Errorf("%s must be true or false", learnArg)
	}
	delete(obj, learnArg)
	rest, err := json.Marshal(obj)
	if err != nil {
		return nil, false, fmt.Errorf("arguments: %v", err)
	}
	return rest, learn, nil
}

// learnResult answers learn: true. It is marked isError, though nothing
// failed: a tool with an output schema must return structured content that
// fits it on success, and clients that check (the TypeScript SDK's does)
// would reject documentation in its place. Its first line says the tool
// was not run and why.
func learnResult(doc string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: doc}}}
}

// learnText documents one tool: what it does, then each argument with its
// type, default or bounds and meaning, then the other spellings it takes.
func learnText(name, title, desc string, in *jsonschema.Schema, spec *argSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s was not run: learn is true, so this is its documentation.\n\n", name)
	fmt.Fprintf(&b, "# %s — %s\n\n%s\n\n## Arguments\n", name, title, desc)
	required := map[string]bool{}
	for _, r := range in.Required {
		required[r] = true
	}
	for _, arg := range append(slices.Clone(spec.names), learnArg) {
		p := in.Properties[arg]
		if p == nil {
			continue
		}
		var facts []string
		if t := schemaType(p); t != "" {
			facts = append(facts, t)
		}
		if required[arg] {
			facts = append(facts, "required")
		} else if len(p.Default) > 0 {
			facts = append(facts, "default "+string(p.Default))
		}
		if len(p.Enum) > 0 {
			var vs []string
			for _, v := range p.Enum {
				vs = append(vs, fmt.Sprint(v))
			}
			facts = append(facts, "one of "+strings.Join(vs, ", "))
		}
		if p.Minimum != nil && p.Maximum != nil {
			facts = append(facts, fmt.Sprintf("%g to %g", *p.Minimum, *p.Maximum))
		}
		fmt.Fprintf(&b, "- %s (%s)", arg, strings.Join(facts, ", "))
		if p.Description != "" {
			b.WriteString(": " + p.Description)
		}
		b.WriteString("\n")
	}
	if len(spec.aliases) > 0 {
		b.WriteString("\n## Also accepted\n")
		for _, alias := range slices.Sorted(maps.Keys(spec.aliases)) {
			fmt.Fprintf(&b, "- %s for %s (maenifold's spelling)\n", alias, spec.aliases[alias])
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func schemaType(p *jsonschema.Schema) string {
	t := p.Type
	if t == "" && len(p.Types) > 0 {
		t = strings.Join(p.Types, " or ")
	}
	if t == "array" && p.Items != nil && p.Items.Type != "" {
		t = "array of " + p.Items.Type + "s"
	}
	return t
}
