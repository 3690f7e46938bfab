package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"mnemo/engine"
)

// The concept graph tools carry maenifold's names and argument names, so
// an agent set up for maenifold calls them unchanged.

// maxConceptChars bounds a concept name argument; concept names are short.
const maxConceptChars = 512

type contextIn struct {
	ConceptName    string `json:"conceptName" jsonschema:"the concept, as written in a [[WikiLink]]; case, spaces, underscores and slashes do not matter"`
	Depth          int    `json:"depth,omitempty" jsonschema:"how many steps out to walk, 1 to 4"`
	MaxEntities    int    `json:"maxEntities,omitempty" jsonschema:"at most this many direct relations, and as many expanded ones, 1 to 100"`
	IncludeContent bool   `json:"includeContent,omitempty" jsonschema:"add a preview of a memory for each relation"`
}

type conceptIn struct {
	ConceptName string `json:"conceptName" jsonschema:"the concept, as written in a [[WikiLink]]"`
	MaxResults  int    `json:"maxResults,omitempty" jsonschema:"at most this many similar concepts, 1 to 50"`
}

type visualizeIn struct {
	ConceptName string `json:"conceptName" jsonschema:"the concept to centre the diagram on"`
	Depth       int    `json:"depth,omitempty" jsonschema:"how many steps out to draw, 1 to 4"`
	MaxNodes    int    `json:"maxNodes,omitempty" jsonschema:"at most this many concepts in the diagram, 1 to 100"`
}

type extractIn struct {
	Identifier string `json:"identifier" jsonschema:"a memory:// URI, a path relative to the memory folder (with or without .md), or an exact title"`
}

func checkConcept(name string) error {
	switch n := utf8.RuneCountInString(name); {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("conceptName is required")
	case n > maxConceptChars:
		return fmt.Errorf("conceptName is %d characters, over the limit of %d", n, maxConceptChars)
	}
	return nil
}

// atLeastOne refuses an explicit 0 or negative count, which the engine
// would otherwise read as "the default".
func atLeastOne(name string, v int) error {
	if v < 1 {
		return fmt.Errorf("%s must be at least 1 (got %d)", name, v)
	}
	return nil
}

func intDefault(s *jsonschema.Schema, name string, def, lo, hi int) {
	p := property(s, name)
	p.Default = json.RawMessage(fmt.Sprint(def))
	p.Minimum, p.Maximum = ptr(float64(lo)), ptr(float64(hi))
}

func (s *server) contextTool() tool[contextIn, engine.ConceptContext] {
	return tool[contextIn, engine.ConceptContext]{
		name:  "BuildContext",
		title: "What surrounds a concept",
		desc: "Walk the concept graph built from the memories' [[WikiLinks]] out from one concept: the concepts that appear in the same memories (directRelations, " +
			"with coOccurrenceCount = memories that link to both, weightedScore = the same weighted by recency, and up to three memory:// URIs), theirs (expandedRelations, up to depth steps out) " +
			"and the other concepts of its community (communitySiblings). An alias (a memory's aliases) names the concept it belongs to. " +
			"An unknown concept is an error that suggests known ones near it in spelling and in meaning (the concepts of the memories a semantic search for it finds).",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			property(in, "conceptName").MaxLength = ptr(maxConceptChars)
			intDefault(in, "depth", engine.DefaultContextDepth, 1, engine.MaxContextDepth)
			intDefault(in, "maxEntities", engine.DefaultMaxEntities, 1, engine.MaxEntities)
			property(in, "includeContent").Default = json.RawMessage("false")
		},
		run: func(ctx context.Context, in *contextIn) (*engine.ConceptContext, error) {
			if err := errors.Join(checkConcept(in.ConceptName), atLeastOne("depth", in.Depth), atLeastOne("maxEntities", in.MaxEntities)); err != nil {
				return nil, err
			}
			c, err := s.eng.BuildContext(ctx, engine.ContextQuery{Concept: in.ConceptName, Depth: in.Depth, MaxEntities: in.MaxEntities, IncludeContent: in.IncludeContent})
			if err != nil {
				return nil, err
			}
			return &c, nil
		},
		text: ContextText,
	}
}

// ContextText renders a BuildContext answer for people: one relation a line.
func ContextText(c *engine.ConceptContext) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[[%s]] (community %d)\n", c.Concept, c.CommunityID)
	section := func(title string, rs []engine.Relation) {
		if len(rs) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for _, r := range rs {
			via := ""
			if r.Depth > 1 {
				via = " via " + r.Via
			}
			fmt.Fprintf(&b, "  %s — %d memories, weighted %.2f%s: %s\n", r.Name, r.CoOccurrenceCount, r.WeightedScore, via, strings.Join(r.Files, ", "))
			if r.ContentPreview != "" {
				fmt.Fprintf(&b, "    %s\n", clip(r.ContentPreview, 200))
			}
		}
	}
	section("Direct relations", c.DirectRelations)
	section("Expanded relations", c.ExpandedRelations)
	if len(c.DirectRelations) == 0 {
		b.WriteString("No other concept shares a memory with it.\n")
	}
	if len(c.CommunitySiblings) > 0 {
		fmt.Fprintf(&b, "Community: %s\n", strings.Join(c.CommunitySiblings, ", "))
	}
	return strings.TrimRight(b.String(), "\n")
}

func (s *server) visualizeTool() tool[visualizeIn, engine.Diagram] {
	return tool[visualizeIn, engine.Diagram]{
		name:  "Visualize",
		title: "Draw a concept's neighbourhood",
		desc: "Draw the concepts around one concept as a Mermaid flowchart (graph LR): nodes are concepts, edges join concepts that share memories and are labelled with how many. " +
			"Every node keeps the edge it was reached by, and the strongest others are drawn up to two edges a node (hiddenEdges counts the rest, also said in a %% comment), so the drawing stays readable. " +
			"Node ids are n0, n1, …; labels are escaped, so any name renders.",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			property(in, "conceptName").MaxLength = ptr(maxConceptChars)
			intDefault(in, "depth", engine.DefaultContextDepth, 1, engine.MaxContextDepth)
			intDefault(in, "maxNodes", engine.DefaultVisualNodes, 1, engine.MaxVisualNodes)
		},
		run: func(ctx context.Context, in *visualizeIn) (*engine.Diagram, error) {
			if err := errors.Join(checkConcept(in.ConceptName), atLeastOne("depth", in.Depth), atLeastOne("maxNodes", in.MaxNodes)); err != nil {
				return nil, err
			}
			d, err := s.eng.Visualize(ctx, in.ConceptName, in.Depth, in.MaxNodes)
			if err != nil {
				return nil, err
			}
			return &d, nil
		},
		text: func(d *engine.Diagram) string { return "```mermaid\n" + d.Mermaid + "```" },
	}
}

func (s *server) similarTool() tool[conceptIn, engine.Similar] {
	return tool[conceptIn, engine.Similar]{
		name:  "FindSimilarConcepts",
		title: "Concepts alike in meaning",
		desc: "Find the concepts closest in meaning to one concept: the cosine (0 to 1) between concept vectors from the configured embedder, " +
			"each embedded from the concept's name and the titles and sections of the memories that link to it. Sorted, most similar first.",
		readOnly:   true,
		idempotent: true,
		schema: func(in *jsonschema.Schema) {
			property(in, "conceptName").MaxLength = ptr(maxConceptChars)
			intDefault(in, "maxResults", engine.DefaultSimilar, 1, engine.MaxSimilar)
		},
		run: func(ctx context.Context, in *conceptIn) (*engine.Similar, error) {
			if err := errors.Join(checkConcept(in.ConceptName), atLeastOne("maxResults", in.MaxResults)); err != nil {
				return nil, err
			}
			r, err := s.eng.FindSimilarConcepts(ctx, in.ConceptName, in.MaxResults)
			if err != nil {
				return nil, err
			}
			return &r, nil
		},
		text: SimilarText,
	}
}

// SimilarText renders a FindSimilarConcepts answer for people.
func SimilarText(r *engine.Similar) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Concepts like [[%s]]:\n", r.Concept)
	for _, c := range r.Similar {
		fmt.Fprintf(&b, "  %.3f  %s\n", c.Similarity, c.Name)
	}
	if len(r.Similar) == 0 {
		b.WriteString("  (no other concept)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func (s *server) extractTool() tool[extractIn, engine.FileConcepts] {
	return tool[extractIn, engine.FileConcepts]{
		name:       "ExtractConceptsFromFile",
		title:      "Concepts of one memory",
		desc:       "List the concepts one memory links to with [[WikiLinks]] (outside code), each with how many links and under which section headings, most linked first.",
		readOnly:   true,
		idempotent: true,
		run: func(ctx context.Context, in *extractIn) (*engine.FileConcepts, error) {
			if err := checkIdentifier(in.Identifier); err != nil {
				return nil, err
			}
			r, err := s.eng.FileConcepts(ctx, in.Identifier)
			if err != nil {
				return nil, err
			}
			return &r, nil
		},
		text: FileConceptsText,
	}
}

// FileConceptsText renders an ExtractConceptsFromFile answer for people.
func FileConceptsText(r *engine.FileConcepts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s links to %d concepts:\n", r.URI, len(r.Concepts))
	for _, c := range r.Concepts {
		fmt.Fprintf(&b, "  %s ×%d", c.Name, c.Count)
		if len(c.Sections) > 0 {
			fmt.Fprintf(&b, " (in %s)", strings.Join(c.Sections, "; "))
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
