package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// decoderFor is what a tool does with its raw arguments before it runs:
// the input schema (with the tool's defaults and bounds) and the decoding
// into its In struct.
func decoderFor[In, Out any](t tool[In, Out]) func(json.RawMessage) error {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(err)
	}
	if t.schema != nil {
		t.schema(in)
	}
	spec := argSpecFor[In](in)
	return func(raw json.RawMessage) error {
		var args In
		return spec.decode(raw, &args)
	}
}

// FuzzDecodeArguments feeds arbitrary bytes, as the arguments of each tool
// in turn, to the decoding every tool call goes through. It must never
// panic, and a refusal must be one short line of valid UTF-8 (it goes back
// to the agent as the error result, quoting none of a 10 MB argument).
// Seeds live in testdata/fuzz/FuzzDecodeArguments.
func FuzzDecodeArguments(f *testing.F) {
	s := &server{}
	decoders := []func(json.RawMessage) error{
		decoderFor(s.searchTool()), decoderFor(s.readTool()), decoderFor(s.writeTool()), decoderFor(s.editTool()),
		decoderFor(s.deleteTool()), decoderFor(s.moveTool()), decoderFor(s.listTool()), decoderFor(s.recentTool()),
		decoderFor(s.syncTool()), decoderFor(s.statusTool()), decoderFor(s.configTool()),
		decoderFor(s.contextTool()), decoderFor(s.visualizeTool()), decoderFor(s.similarTool()), decoderFor(s.extractTool()),
		decoderFor(s.searchSessionsTool()), decoderFor(s.getSessionTool()), decoderFor(s.getMessageTool()),
	}
	f.Add(uint8(0), []byte(`{"query":"bbolt","mode":"Hybrid","pageSize":2.0,"tags":["a","b"]}`))
	f.Add(uint8(2), []byte(`{"title":"t","content":"c","folder":"../x","tags":null}`))
	f.Add(uint8(3), []byte(`{"identifier":"memory://a","operation":"append","content":"x","checksum":"00"}`))
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		err := decoders[int(which)%len(decoders)](raw)
		if err == nil {
			return
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\r\n") || len(msg) > 400 || !utf8.ValidString(msg) {
			t.Fatalf("refusal is not one short line of UTF-8 (%d bytes): %q", len(msg), msg)
		}
	})
}
