package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"mnemo/mcp/args"
)

// tool is one MCP tool: In is its arguments, Out its structured result.
// The SDK's generic AddTool would validate with JSON Schema and report
// errors that quote the offending value (a 10 MB string, say) over several
// lines; tools here decode and validate their arguments themselves so that
// every refusal is one short line, and so that a panic anywhere becomes an
// error result instead of a dead server.
type tool[In, Out any] struct {
	name, title, desc string
	readOnly          bool // does not change memories (ReadMemory still records the read)
	destructive       bool // may delete or overwrite content
	idempotent        bool
	// schema adjusts the input schema inferred from In: defaults, bounds,
	// enums. Defaults set here are also what an absent argument decodes to.
	schema func(s *jsonschema.Schema)
	// aliases are other spellings of arguments, alias → name: maenifold's
	// own (MoveMemory's source for identifier, …), so that prompts and
	// skills written for it work unchanged. They are not in the schema,
	// which shows a model one name per argument.
	aliases map[string]string
	run     func(ctx context.Context, in *In) (*Out, error)
	text    func(out *Out) string // the plain rendering for clients that show text
}

// fitter is implemented by results that can shrink to fit the response
// limit: they hold units (results, entries, bytes of content) and keep the
// first n, saying in the result that they were cut. keep(units()) must be a
// no-op. keep works on a shallow copy, so it must reslice, never write into
// shared slices.
type fitter interface {
	units() int
	keep(n int)
}

// add registers t on s.
func add[In, Out any](s *sdk.Server, srv *server, t tool[In, Out]) {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.name, err))
	}
	if t.schema != nil {
		t.schema(in)
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", t.name, err))
	}
	spec := argSpecFor[In](in)
	spec.aliases = t.aliases
	addLearn(in)
	doc := learnText(t.name, t.title, t.desc, in, spec)
	no := false
	s.AddTool(&sdk.Tool{
		Name:         t.name,
		Title:        t.title,
		Description:  t.desc,
		InputSchema:  in,
		OutputSchema: out,
		Annotations: &sdk.ToolAnnotations{
			Title:           t.title,
			ReadOnlyHint:    t.readOnly,
			DestructiveHint: &t.destructive,
			IdempotentHint:  t.idempotent,
			OpenWorldHint:   &no,
		},
	}, func(ctx context.Context, req *sdk.CallToolRequest) (res *sdk.CallToolResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				srv.logf("tool %s panicked: %v\n%s", t.name, r, debug.Stack())
				res, err = errorResult(fmt.Errorf("internal error in %s: %v", t.name, r)), nil
			}
		}()
		var raw json.RawMessage
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		raw, learn, err := takeLearn(raw)
		if err != nil {
			return errorResult(err), nil
		}
		if learn {
			return learnResult(doc), nil
		}
		var args In
		if err := spec.decode(raw, &args); err != nil {
			return errorResult(err), nil
		}
		o, err := t.run(ctx, &args)
		if err != nil {
			return errorResult(err), nil
		}
		return respond(srv.opts.MaxResponseBytes, o, t.text), nil
	})
}

// errorResult is the MCP tool error form: isError and a one-line message.
func errorResult(err error) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: oneLine(err.Error())}}}
}

// maxErrorBytes caps an error message: errors quote what the caller sent,
// and that may be a megabyte of path.
const maxErrorBytes = 300

// oneLine makes s a single line of printable, valid UTF-8 of at most
// maxErrorBytes.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return clip(s, maxErrorBytes)
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:max(cut, 0)] + "…"
}

// respond renders out as structured content plus text, shrinking it if a
// fitter until both fit in budget bytes together.
func respond[Out any](budget int, out *Out, text func(*Out) string) *sdk.CallToolResult {
	render := func(o *Out) (json.RawMessage, string, int) {
		j := marshal(o)
		t := text(o)
		// The text goes on the wire as a JSON string, escapes included: at
		// most 6 bytes for each of its bytes (\u003c, \ufffd). Measuring
		// it exactly costs a second encoding of the text, paid only when
		// that bound does not settle whether the result fits.
		if n := len(j) + 2 + 6*len(t); n <= budget {
			return j, t, n
		}
		tj, _ := json.Marshal(t)
		return j, t, len(j) + len(tj)
	}
	j, txt, n := render(out)
	if _, ok := any(out).(fitter); ok && n > budget {
		cut := func(k int) *Out {
			c := *out
			any(&c).(fitter).keep(k)
			return &c
		}
		lo, hi, best := 0, any(out).(fitter).units()-1, 0
		for lo <= hi {
			mid := lo + (hi-lo)/2
			if _, _, n := render(cut(mid)); n <= budget {
				best, lo = mid, mid+1
			} else {
				hi = mid - 1
			}
		}
		j, txt, _ = render(cut(best))
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: txt}}, StructuredContent: j}
}

// marshal is json.Marshal without HTML escaping: memories are full of
// "<", ">" and "&", and escaping them would inflate every response.
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("marshal result: %v", err)) // our own types: a bug
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// argSpec decodes one tool's arguments into its In struct.
type argSpec struct {
	names    []string // in declaration order
	fields   map[string]argField
	required map[string]bool
	defaults map[string]json.RawMessage
	aliases  map[string]string // other spellings, alias → name
	// own is set when In decodes itself (a json.Unmarshaler, such as
	// args.Query): the spec then only checks names, required arguments
	// and defaults, and hands In the arguments with the defaults filled in.
	own bool
}

type argField struct {
	index []int
	want  string // what the value must be, for messages: "a string"
	isInt bool
}

func argSpecFor[In any](s *jsonschema.Schema) *argSpec {
	a := &argSpec{fields: map[string]argField{}, required: map[string]bool{}, defaults: map[string]json.RawMessage{}}
	for _, r := range s.Required {
		a.required[r] = true
	}
	if _, ok := any(new(In)).(json.Unmarshaler); ok {
		a.own = true
		a.names = s.PropertyOrder
		if len(a.names) != len(s.Properties) {
			panic(fmt.Sprintf("%T: the schema must list every property in PropertyOrder", *new(In)))
		}
		for _, name := range a.names {
			p := s.Properties[name]
			if p == nil {
				panic(fmt.Sprintf("%T: PropertyOrder names %s, which is not a property", *new(In), name))
			}
			a.fields[name] = argField{}
			if p.Default != nil {
				a.defaults[name] = p.Default
			}
		}
		return a
	}
	t := reflect.TypeFor[In]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		af := argField{index: f.Index}
		switch f.Type.Kind() {
		case reflect.String:
			af.want = "a string"
		case reflect.Bool:
			af.want = "true or false"
		case reflect.Pointer: // an optional switch: absent means "either"
			if f.Type.Elem().Kind() != reflect.Bool {
				panic(fmt.Sprintf("argument %s: unsupported type %s", name, f.Type))
			}
			af.want = "true or false"
		case reflect.Int, reflect.Int64, reflect.Int32:
			af.want, af.isInt = "an integer", true
		case reflect.Float64:
			af.want = "a number"
		case reflect.Slice:
			af.want = "an array of strings (or one string)"
		default:
			panic(fmt.Sprintf("argument %s: unsupported type %s", name, f.Type))
		}
		a.names = append(a.names, name)
		a.fields[name] = af
		if p := s.Properties[name]; p != nil && p.Default != nil {
			a.defaults[name] = p.Default
		}
	}
	return a
}

// decode fills dst (a pointer to In) from raw JSON arguments: unknown
// parameters and missing required ones are refused; absent and null ones
// take their schema default.
func (a *argSpec) decode(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if raw[0] != '{' {
		return errors.New("arguments must be a JSON object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if err := a.unalias(obj); err != nil {
		return err
	}
	var unknown []string
	for k := range obj {
		if _, ok := a.fields[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		if len(a.names) == 0 {
			return fmt.Errorf("unknown parameter %.40q: this tool takes no parameters", unknown[0])
		}
		return fmt.Errorf("unknown parameter %.40q (accepted: %s)", unknown[0], strings.Join(a.names, ", "))
	}
	if a.own {
		return a.decodeOwn(obj, dst.(json.Unmarshaler))
	}
	v := reflect.ValueOf(dst).Elem()
	for _, name := range a.names {
		val, ok := obj[name]
		if !ok || string(bytes.TrimSpace(val)) == "null" {
			if a.required[name] {
				return fmt.Errorf("%s is required", name)
			}
			if val, ok = a.defaults[name]; !ok {
				continue
			}
		}
		f := a.fields[name]
		if err := decodeValue(val, v.FieldByIndex(f.index), f.isInt); err != nil {
			return fmt.Errorf("%s must be %s", name, f.want)
		}
	}
	return nil
}

// unalias renames each alias in obj to the name it spells; an argument
// given under both spellings is refused rather than one silently winning.
func (a *argSpec) unalias(obj map[string]json.RawMessage) error {
	for _, alias := range slices.Sorted(maps.Keys(a.aliases)) {
		val, ok := obj[alias]
		if !ok {
			continue
		}
		name := a.aliases[alias]
		if _, both := obj[name]; both {
			return fmt.Errorf("%s and %s are the same argument: give one", name, alias)
		}
		delete(obj, alias)
		obj[name] = val
	}
	return nil
}

// decodeOwn checks required arguments, fills in defaults and lets dst
// decode the rest.
func (a *argSpec) decodeOwn(obj map[string]json.RawMessage, dst json.Unmarshaler) error {
	for _, name := range a.names {
		if val, ok := obj[name]; !ok || string(bytes.TrimSpace(val)) == "null" {
			if a.required[name] {
				return fmt.Errorf("%s is required", name)
			}
			if def, ok := a.defaults[name]; ok {
				obj[name] = def
			}
		}
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("arguments: %v", err)
	}
	return dst.UnmarshalJSON(b)
}

// decodeValue decodes one argument. Integers may come as 2 or 2.0 (some
// clients send every number as a float) but not as 2.5.
func decodeValue(val json.RawMessage, fv reflect.Value, isInt bool) error {
	if fv.Kind() == reflect.Slice { // tags: an array, or one string
		tags, err := args.Tags("", val)
		if err != nil {
			return err
		}
		fv.Set(reflect.ValueOf(tags))
		return nil
	}
	if !isInt {
		return json.Unmarshal(val, fv.Addr().Interface())
	}
	n, err := args.Int("", val)
	if err != nil {
		return err
	}
	fv.SetInt(int64(n))
	return nil
}

// property returns the schema of one argument, for tool.schema functions.
func property(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p := s.Properties[name]
	if p == nil {
		panic("no argument " + name)
	}
	return p
}

func ptr[T any](v T) *T { return &v }

// plural is "1 memory", "0 memories", "2 memories".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
