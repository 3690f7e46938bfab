package graph

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func m(concept string, count int, sections ...string) Mention {
	return Mention{Concept: concept, Count: count, Sections: sections}
}

// sample: three files about databases, one about cooking.
func sample() *Graph {
	g := New()
	g.Set("a.md", []Mention{m("bbolt", 2, "Storage"), m("go", 1), m("sqlite", 1)})
	g.Set("b.md", []Mention{m("bbolt", 1), m("go", 3)})
	g.Set("c.md", []Mention{m("sqlite", 1), m("bbolt", 1)})
	g.Set("d.md", []Mention{m("pasta", 1), m("tomato", 2)})
	return g
}

func TestSetAndRemove(t *testing.T) {
	g := sample()
	if g.Len() != 5 || g.Files() != 4 || g.Links() != 13 {
		t.Fatalf("Len %d Files %d Links %d, want 5 4 13", g.Len(), g.Files(), g.Links())
	}
	want := []Concept{{"bbolt", 4, 3}, {"go", 4, 2}, {"sqlite", 2, 2}, {"tomato", 2, 1}, {"pasta", 1, 1}}
	if got := g.Concepts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Concepts = %v, want %v", got, want)
	}
	// An edit that drops a link drops the mention, and a concept no one
	// mentions leaves the graph.
	g.Set("d.md", []Mention{m("tomato", 1)})
	if g.Has("pasta") {
		t.Error("pasta still known after the only link to it was removed")
	}
	g.Remove("d.md")
	if g.Has("tomato") || g.Files() != 3 || g.Links() != 10 {
		t.Errorf("after Remove: tomato %v, Files %d, Links %d", g.Has("tomato"), g.Files(), g.Links())
	}
	g.Set("a.md", nil)
	if got := g.Postings("bbolt"); len(got) != 2 || got[0].Path != "b.md" {
		t.Errorf("Postings(bbolt) after emptying a.md = %v", got)
	}
}

func TestSetMergesAndDropsBadMentions(t *testing.T) {
	g := New()
	g.Set("x.md", []Mention{m("a", 1, "One"), m("", 3), m("b", 0), m("a", 2, "Two", "One")})
	want := []Mention{m("a", 3, "One", "Two")}
	if got := g.FileMentions("x.md"); !reflect.DeepEqual(got, want) {
		t.Errorf("FileMentions = %v, want %v", got, want)
	}
	if g.Has("b") || g.Links() != 3 {
		t.Errorf("Has(b) %v, Links %d", g.Has("b"), g.Links())
	}
}

func TestRelated(t *testing.T) {
	g := sample()
	w := func(p string) float64 { return map[string]float64{"a.md": 0.5, "b.md": 1, "c.md": 0.25}[p] }
	got := g.Related("bbolt", w)
	want := []Relation{
		{Name: "go", CoOccurrence: 2, Weighted: 1.5, Files: []string{"b.md", "a.md"}, Via: "bbolt", Depth: 1},
		{Name: "sqlite", CoOccurrence: 2, Weighted: 0.75, Files: []string{"a.md", "c.md"}, Via: "bbolt", Depth: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Related(bbolt) =\n%+v\nwant\n%+v", got, want)
	}
	if got := g.Related("pasta", nil); len(got) != 1 || got[0].Name != "tomato" || got[0].Weighted != 1 {
		t.Errorf("Related(pasta) = %+v", got)
	}
	if got := g.Related("unknown", nil); len(got) != 0 {
		t.Errorf("Related(unknown) = %+v", got)
	}
}

func TestRelationFilesCapped(t *testing.T) {
	g := New()
	for i := range 10 {
		g.Set(fmt.Sprintf("f%d.md", i), []Mention{m("x", 1), m("y", 1)})
	}
	r := g.Related("x", nil)
	if len(r) != 1 || r[0].CoOccurrence != 10 || len(r[0].Files) != MaxRelationFiles {
		t.Fatalf("Related = %+v", r)
	}
}

func TestContext(t *testing.T) {
	// a chain: a–b in f1, b–c in f2, c–d in f3, and a–e in f4.
	g := New()
	g.Set("f1", []Mention{m("a", 1), m("b", 1)})
	g.Set("f2", []Mention{m("b", 1), m("c", 1)})
	g.Set("f3", []Mention{m("c", 1), m("d", 1)})
	g.Set("f4", []Mention{m("a", 1), m("e", 1)})
	names := func(rs []Relation) (out []string) {
		for _, r := range rs {
			out = append(out, r.Name+"<"+r.Via)
		}
		return out
	}
	tests := []struct {
		depth, max     int
		direct, expand []string
	}{
		{1, 20, []string{"b<a", "e<a"}, nil},
		{2, 20, []string{"b<a", "e<a"}, []string{"c<b"}},
		{3, 20, []string{"b<a", "e<a"}, []string{"c<b", "d<c"}},
		{4, 1, []string{"b<a"}, []string{"c<b"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("depth%d-max%d", tt.depth, tt.max), func(t *testing.T) {
			c, ok := g.Context("a", ContextOptions{Depth: tt.depth, MaxEntities: tt.max})
			if !ok {
				t.Fatal("a unknown")
			}
			if got := names(c.Direct); !slices.Equal(got, tt.direct) {
				t.Errorf("direct = %v, want %v", got, tt.direct)
			}
			if got := names(c.Expanded); !slices.Equal(got, tt.expand) {
				t.Errorf("expanded = %v, want %v", got, tt.expand)
			}
		})
	}
	if _, ok := g.Context("zzz", ContextOptions{}); ok {
		t.Error("Context of an unknown concept is ok")
	}
}

func TestContextSiblings(t *testing.T) {
	g := New()
	// two cliques joined by nothing: {a,b,c} and {x,y,z}.
	g.Set("1", []Mention{m("a", 1), m("b", 1), m("c", 1)})
	g.Set("2", []Mention{m("a", 1), m("b", 1)})
	g.Set("3", []Mention{m("x", 1), m("y", 1), m("z", 1)})
	cs := Louvain(g.Network(), 1)
	c, _ := g.Context("c", ContextOptions{Depth: 1, MaxEntities: 10, Communities: cs})
	if !slices.Equal(c.Siblings, []string{"a", "b"}) {
		t.Errorf("siblings of c = %v, want [a b]", c.Siblings)
	}
	if cs.Len() != 2 {
		t.Errorf("%d communities, want 2", cs.Len())
	}
}

func TestNearest(t *testing.T) {
	g := New()
	g.Set("1", []Mention{m("machine-learning", 5), m("deep-learning", 1), m("bbolt", 1), m("东京", 1)})
	tests := []struct {
		in   string
		want []string
	}{
		{"machine-lerning", []string{"machine-learning"}},
		{"learning", []string{"machine-learning", "deep-learning"}},
		{"bolt", []string{"bbolt"}},
		{"东", []string{"东京"}},
		{"nothing-like-it", []string{}},
	}
	for _, tt := range tests {
		if got := g.Nearest(tt.in, 5); !slices.Equal(got, tt.want) {
			t.Errorf("Nearest(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestMermaidEscapesEveryName(t *testing.T) {
	g := New()
	hostile := []string{`say-"hi"`, "a[b]", "x|y", "<script>", "c#-notes", "a&b", "back`tick", "semi;colon", "{curly}", "東京"}
	ms := []Mention{m("centre", 1)}
	for _, h := range hostile {
		ms = append(ms, m(h, 1))
	}
	g.Set("f", ms)
	p, ok := g.Picture("centre", 1, 100, nil)
	if !ok {
		t.Fatal("centre unknown")
	}
	out := p.Mermaid()
	if len(p.Nodes) != len(hostile)+1 {
		t.Fatalf("%d nodes, want %d", len(p.Nodes), len(hostile)+1)
	}
	pairs := (len(hostile) + 1) * len(hostile) / 2
	if wantEdges := EdgesPerNode * len(p.Nodes); len(p.Edges) != wantEdges || p.Hidden != pairs-wantEdges {
		t.Errorf("%d edges, %d hidden; want %d, %d", len(p.Edges), p.Hidden, wantEdges, pairs-wantEdges)
	}
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		switch {
		case line == "graph LR" || strings.HasPrefix(line, "style ") || strings.HasPrefix(line, "%% "):
		case strings.Contains(line, `["`):
			// n<digits>["label"] where label holds no raw special character
			id, label, _ := strings.Cut(line, `["`)
			label = strings.TrimSuffix(label, `"]`)
			if strings.Trim(id, "n0123456789") != "" || !strings.HasPrefix(id, "n") {
				t.Errorf("unsafe node id in %q", line)
			}
			if strings.ContainsAny(entity.ReplaceAllString(label, ""), "\"[]|<>&`{};#") {
				t.Errorf("unescaped label in %q", line)
			}
		default:
			var a, b, n int
			if _, err := fmt.Sscanf(line, "n%d ---|%d| n%d", &a, &n, &b); err != nil {
				t.Errorf("unexpected line %q: %v", line, err)
			}
		}
	}
	if !strings.Contains(out, `n1["#lt;script#gt;"]`) && !strings.Contains(out, `#lt;script#gt;`) {
		t.Errorf("<script> not escaped:\n%s", out)
	}
	if !strings.Contains(out, `c#35;-notes`) || !strings.Contains(out, `say-#quot;hi#quot;`) {
		t.Errorf("# or \" not escaped:\n%s", out)
	}
}

var entity = regexp.MustCompile(`#(\d+|[a-z]+);`)

// TestPictureEdges: a drawing keeps the links the walk followed, so every
// node is joined to the centre, and at most EdgesPerNode edges a node,
// the strongest first.
func TestPictureEdges(t *testing.T) {
	files := randomFiles(rand.New(rand.NewPCG(7, 8)), 300, 60)
	g := New()
	for p, ms := range files {
		g.Set(p, ms)
	}
	p, _ := g.Picture("c0", 2, 30, nil)
	if len(p.Nodes) != 30 || len(p.Edges) > EdgesPerNode*len(p.Nodes) || p.Hidden == 0 {
		t.Fatalf("%d nodes, %d edges, %d hidden", len(p.Nodes), len(p.Edges), p.Hidden)
	}
	adj := map[string][]string{}
	for _, e := range p.Edges {
		adj[e.From] = append(adj[e.From], e.To)
		adj[e.To] = append(adj[e.To], e.From)
	}
	seen := map[string]bool{"c0": true}
	stack := []string{"c0"}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, o := range adj[n] {
			if !seen[o] {
				seen[o] = true
				stack = append(stack, o)
			}
		}
	}
	if len(seen) != len(p.Nodes) {
		t.Errorf("%d of %d nodes joined to the centre", len(seen), len(p.Nodes))
	}
}

func TestPictureMaxNodes(t *testing.T) {
	g := sample()
	p, _ := g.Picture("bbolt", 3, 2, nil)
	if !slices.Equal(p.Nodes, []string{"bbolt", "go"}) || len(p.Edges) != 1 || p.Edges[0].Count != 2 {
		t.Errorf("Picture = %+v", p)
	}
}

// randomGraph fills files with Zipf-distributed concepts, in random order.
func randomFiles(r *rand.Rand, files, concepts int) map[string][]Mention {
	z := rand.NewZipf(r, 1.1, 1, uint64(concepts-1))
	out := map[string][]Mention{}
	for i := range files {
		var ms []Mention
		for range 2 + r.IntN(8) {
			ms = append(ms, m(fmt.Sprintf("c%d", z.Uint64()), 1+r.IntN(3)))
		}
		out[fmt.Sprintf("f%d.md", i)] = ms
	}
	return out
}

func TestLouvainDeterministic(t *testing.T) {
	files := randomFiles(rand.New(rand.NewPCG(1, 2)), 400, 150)
	build := func(seed uint64) *Graph {
		paths := make([]string, 0, len(files))
		for p := range files {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		rand.New(rand.NewPCG(seed, seed)).Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
		g := New()
		for _, p := range paths {
			g.Set(p, files[p])
		}
		return g
	}
	first := Louvain(build(0).Network(), 1)
	if first.Len() < 2 || first.Len() >= 150 {
		t.Fatalf("%d communities for 150 concepts: not a partition worth testing", first.Len())
	}
	for seed := range uint64(8) {
		got := Louvain(build(seed).Network(), 1)
		if !reflect.DeepEqual(got.members, first.members) {
			t.Fatalf("insertion order %d gave other communities", seed)
		}
	}
	if finer := Louvain(build(0).Network(), 4); finer.Len() <= first.Len() {
		t.Errorf("gamma 4 gave %d communities, gamma 1 %d: want more at higher resolution", finer.Len(), first.Len())
	}
}

// TestIncrementalEqualsRebuild applies random edit sequences (add, change,
// drop links, delete, move) and checks after every step that the graph
// equals one built from scratch from the files as they now are.
func TestIncrementalEqualsRebuild(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 99))
		files := map[string][]Mention{}
		decls := map[string][]string{} // path → its concept, then its aliases
		g := New()
		for step := range 200 {
			path := fmt.Sprintf("f%d.md", r.IntN(15))
			switch op := r.IntN(6); op {
			case 5: // declare aliases, or none (the names links use: c0…c11)
				var names []string
				for range r.IntN(4) {
					names = append(names, fmt.Sprintf("c%d", r.IntN(12)))
				}
				concept := fmt.Sprintf("c%d", r.IntN(12))
				decls[path] = append([]string{concept}, names...)
				g.SetNames(path, concept, names)
			case 0, 1: // write or rewrite
				ms := randomFiles(r, 1, 12)["f0.md"]
				if r.IntN(6) == 0 {
					ms = nil // a file with no links at all
				}
				files[path] = ms
				g.Set(path, ms)
			case 2: // drop one link
				if ms := files[path]; len(ms) > 0 {
					ms = slices.Delete(slices.Clone(ms), 0, 1)
					files[path] = ms
					g.Set(path, ms)
				}
			case 3: // delete
				delete(files, path)
				delete(decls, path)
				g.Remove(path)
			case 4: // move
				to := fmt.Sprintf("f%d.md", r.IntN(15))
				if ms, ok := files[path]; ok && to != path {
					d := decls[path]
					delete(files, path)
					delete(decls, path)
					g.Remove(path)
					files[to] = ms
					g.Set(to, ms)
					if d != nil {
						decls[to] = d
						g.SetNames(to, d[0], d[1:])
					}
				}
			}
			// A rebuild reads files in any order: links before names here.
			fresh := New()
			for p, ms := range files {
				fresh.Set(p, ms)
			}
			for p, d := range decls {
				fresh.SetNames(p, d[0], d[1:])
			}
			if !g.Equal(fresh) || !fresh.Equal(g) {
				t.Fatalf("seed %d step %d: incremental graph differs from rebuild", seed, step)
			}
			if !reflect.DeepEqual(g.Concepts(), fresh.Concepts()) {
				t.Fatalf("seed %d step %d: concepts differ", seed, step)
			}
		}
	}
}

func TestAliases(t *testing.T) {
	g := New()
	g.Set("a.md", []Mention{m("ai", 2), m("ml", 1)})
	g.Set("b.md", []Mention{m("artificial-intelligence", 1), m("ml", 1)})
	g.SetNames("artificial-intelligence.md", "artificial-intelligence", []string{"ai", "artificial-intelligence"})
	if g.Has("ai") || !g.Has("artificial-intelligence") || g.Resolve("ai") != "artificial-intelligence" {
		t.Fatalf("alias not resolved: %+v", g.Concepts())
	}
	want := []Concept{{Name: "artificial-intelligence", Mentions: 3, Files: 2}, {Name: "ml", Mentions: 2, Files: 2}}
	if got := g.Concepts(); !reflect.DeepEqual(got, want) {
		t.Errorf("Concepts = %+v, want %+v", got, want)
	}
	if got := g.Aliases("artificial-intelligence"); !reflect.DeepEqual(got, []string{"ai"}) {
		t.Errorf("Aliases = %q", got)
	}
	// A second declaration of the same alias: the first path wins, whatever the order.
	g.SetNames("0-other.md", "other", []string{"ai"})
	if g.Resolve("ai") != "other" || g.Postings("other")[0].Path != "a.md" {
		t.Errorf("first path should win: ai → %q", g.Resolve("ai"))
	}
	g.Remove("0-other.md")
	g.Remove("artificial-intelligence.md")
	if !g.Has("ai") || g.Resolve("ai") != "ai" || len(g.Postings("artificial-intelligence")) != 1 {
		t.Errorf("removing the declarations should give [[ai]] back: %+v", g.Concepts())
	}
}

func TestEqualDetectsDifferences(t *testing.T) {
	a, b := sample(), sample()
	if !a.Equal(b) {
		t.Fatal("equal graphs differ")
	}
	b.Set("a.md", []Mention{m("bbolt", 2, "Other"), m("go", 1), m("sqlite", 1)})
	if a.Equal(b) {
		t.Error("a different section went unnoticed")
	}
	b = sample()
	b.Set("a.md", []Mention{m("bbolt", 3, "Storage"), m("go", 1), m("sqlite", 1)})
	if a.Equal(b) {
		t.Error("a different count went unnoticed")
	}
}

func BenchmarkRelatedMostConnected(b *testing.B) {
	g := New()
	for p, ms := range randomFiles(rand.New(rand.NewPCG(3, 4)), 5000, 2000) {
		g.Set(p, ms)
	}
	top := g.Concepts()[0].Name
	for b.Loop() {
		g.Context(top, ContextOptions{Depth: 2, MaxEntities: 20})
	}
}

// TestLouvainFindsPlantedCommunities: four groups of ten concepts that
// co-occur among themselves, joined by one weak bridge each, come out as
// the four groups.
func TestLouvainFindsPlantedCommunities(t *testing.T) {
	g := New()
	file := 0
	for grp := range 4 {
		for i := range 10 {
			for j := i + 1; j < 10; j++ {
				g.Set(fmt.Sprintf("f%d", file), []Mention{m(fmt.Sprintf("g%d-%d", grp, i), 1), m(fmt.Sprintf("g%d-%d", grp, j), 1)})
				file++
			}
		}
		g.Set(fmt.Sprintf("bridge%d", grp), []Mention{m(fmt.Sprintf("g%d-0", grp), 1), m(fmt.Sprintf("g%d-0", (grp+1)%4), 1)})
	}
	g.Set("alone", []Mention{m("hermit", 1)})
	cs := Louvain(g.Network(), 1)
	if cs.Len() != 5 {
		t.Fatalf("%d communities, want 4 groups and the hermit", cs.Len())
	}
	for grp := range 4 {
		id, _ := cs.Of(fmt.Sprintf("g%d-0", grp))
		members := cs.Members(id)
		if len(members) != 10 || !strings.HasPrefix(members[9], fmt.Sprintf("g%d-", grp)) || !strings.HasPrefix(members[0], fmt.Sprintf("g%d-", grp)) {
			t.Errorf("group %d: community %v", grp, members)
		}
	}
	if id, _ := cs.Of("hermit"); len(cs.Members(id)) != 1 {
		t.Errorf("hermit shares community %v", cs.Members(id))
	}
}
