package engine_test

import (
	"slices"
	"testing"

	"mnemo/engine"
)

// A Chinese query is matched by its bigrams, not by its single characters:
// 数据库 must not find a memory that only shares the character 数 (in 参数).
func TestCJKQueryNeedsBigrams(t *testing.T) {
	v := newVault(t, map[string]string{
		"db.md":     memo("会议", "", nil, "我们讨论了数据库的升级计划。"),
		"params.md": memo("配置", "", nil, "请检查连接池的参数设置。"),
	})
	for _, q := range []string{"数据库", "数据库升级"} {
		if got := v.find(engine.FullText, q); !slices.Equal(got, []string{"db.md"}) {
			t.Errorf("%s → %v, want [db.md]", q, got)
		}
	}
}

// Each term of a query that mixes scripts is scored in its own field: the
// Latin words in the English fields, the CJK bigrams in the cjk field. A
// Chinese memory holding the same Latin words as an English one gets no
// more for them (they once counted in both of its fields, so Chinese
// pages outranked the English page of the same command), and still wins
// when the query's Chinese matches it.
func TestMixedQueryScoresEachTermOnce(t *testing.T) {
	v := newVault(t, map[string]string{
		"en.md": memo("git commit", "", nil, "git commit records the staged changes."),
		"zh.md": memo("git commit", "", nil, "git commit 把暂存的更改记录下来。"),
	})
	for _, tc := range []struct{ q, first string }{
		{"git commit 数据库", "en.md"}, // 数据库 matches neither: the Latin words decide, and zh.md is longer
		{"git commit 暂存", "zh.md"},
		{"git commit", "en.md"},
	} {
		got := v.find(engine.FullText, tc.q)
		if len(got) != 2 || got[0] != tc.first {
			t.Errorf("%q → %v, want both, %s first", tc.q, got, tc.first)
		}
	}
}
