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
