package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/markdown"
)

// TestAnalyzedLensMatchFieldLens checks that the field lengths a sync
// reads from Bleve's analysis are the counts fieldLens gets by analysing
// the fields itself, so BM25 scores do not move: stopwords, possessives,
// diacritics, CJK and SEA text, empty fields, and every memory of the
// sample vault.
func TestAnalyzedLensMatchFieldLens(t *testing.T) {
	ft := testAnalyzers(t)
	docs := map[string]*ftDoc{
		"empty.md":    {},
		"stop.md":     {Title: "The", Body: "The\nof the and a an it is", Tags: "the"},
		"poss.md":     {Title: "Bleve's index", Body: "Bleve's index\nJames' and Müller's cafés, naïve façade ÆSIR ﬁle", Tags: "bleve's x"},
		"cjk.md":      {Title: "数据库", Body: "数据库\n数据库迁移 検索インデックス 한국어 and English", CJK: "数据库\n数据库迁移 検索インデックス 한국어 and English", Tag: []string{"a"}},
		"thai.md":     {Title: "ภาษาไทย", Body: "ภาษาไทย\nสวัสดีครับ running runs", CJK: "ภาษาไทย\nสวัสดีครับ running runs"},
		"numbers.md":  {Title: "Q1 2025", Body: "Q1 2025\nv1.2.3 10:30 e-mail foo_bar x86-64 ---", Tags: "q1 plan"},
		"folder/a.md": {Title: "a", Body: "a\n" + strings.Repeat("word ", 500), Folder: []string{"folder"}},
	}
	vault := filepath.Join("..", "testdata", "vault")
	err := filepath.WalkDir(vault, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".md" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		doc, err := markdown.Parse(p, data, markdown.Options{})
		if err != nil {
			return err
		}
		fd := &ftDoc{Title: doc.Title, Body: doc.Title + "\n" + doc.Text, Tags: strings.Join(doc.Tags, " "), Tag: doc.Tags}
		if needsBigrams(fd.Body) {
			fd.CJK = fd.Body
		}
		docs["vault/"+p] = fd
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 12 {
		t.Fatalf("only %d documents: the sample vault was not read", len(docs))
	}
	b := ft.idx.NewBatch()
	indexed := map[string]func() [len(textFields)]int32{}
	for path, fd := range docs {
		d, err := ft.document(path, fd)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.IndexAdvanced(d); err != nil {
			t.Fatal(err)
		}
		indexed[path] = func() [len(textFields)]int32 { return analyzedLens(d) }
	}
	if err := ft.idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	var nonzero int
	for path, fd := range docs {
		got, want := indexed[path](), ft.fieldLens(fd)
		if got != want {
			t.Errorf("%s: Bleve's analysis gave field lengths %v, fieldLens %v", path, got, want)
		}
		if want[1] > 0 {
			nonzero++
		}
	}
	if nonzero < len(docs)-2 {
		t.Errorf("only %d of %d documents have a body length: the comparison is vacuous", nonzero, len(docs))
	}
}
