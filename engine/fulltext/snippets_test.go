package fulltext

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestMatchSpansPooled: snippets' spans from the index's pooled analysers,
// which remember the words of every text they analysed before, are what
// a fresh analyser finds, text after text and query after query (CJK and
// accented words among them).
func TestMatchSpansPooled(t *testing.T) {
	ft, err := Open(filepath.Join(t.TempDir(), "ft"), true, DurableBatches, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ft.Close()
	texts := []string{
		"The migrations ran; migrating the ledger took an hour.",
		"Running the runner: it runs, ran and will run again.",
		"Café résumé: the naïve cafés were migrated too.",
		"数据库迁移 took the 数据库 offline; migration done.",
		"nothing of the query here at all",
		"RUNS Runs runs. Ledger-ledgers, LEDGER.",
	}
	queries := []string{"migration ledger", "run", "cafe resume", "数据库 migrate", "ledgers running café"}
	for round := range 3 {
		for _, q := range queries {
			terms := ft.AnalyzeQuery(q)
			for _, text := range texts {
				got, want := ft.matchSpans(text, terms), ft.NewAnalyser().matchSpans(text, terms)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d, %q in %q: pooled %v, fresh %v", round, q, text, got, want)
				}
			}
		}
	}
}
