package engine_test

import (
	"errors"
	"testing"

	"mnemo/engine"
)

// Thai, Lao, Khmer and Myanmar are written without spaces between words,
// and Bleve's tokenizer drops them: every query in them was refused as
// having no informative term. They are matched by character bigrams, like
// CJK; each query below finds its own memory first and not the others.
// The texts are tldr pages' task lines (CC BY 4.0) and their translations.
func TestSpacelessScriptsAreSearchable(t *testing.T) {
	files := map[string]string{
		"th/ls.md":    memo("ls", "", nil, "แสดงรายการไฟล์ในไดเรกทอรี แสดงไฟล์ที่ซ่อนอยู่ด้วย"),
		"th/cp.md":    memo("cp", "", nil, "คัดลอกไฟล์ไปยังตำแหน่งอื่น คัดลอกไดเรกทอรีแบบเรียกซ้ำ"),
		"lo/ls.md":    memo("ls", "", nil, "ສະແດງລາຍການໄຟລ໌ໃນໂຟນເດີ"),
		"lo/rm.md":    memo("rm", "", nil, "ລຶບໄຟລ໌ອອກຈາກລະບົບ"),
		"km/cp.md":    memo("cp", "", nil, "ចម្លងឯកសារទៅទីតាំងថ្មី"),
		"km/rm.md":    memo("rm", "", nil, "លុបឯកសារចេញពីប្រព័ន្ធ"),
		"my/ls.md":    memo("ls", "", nil, "ဖိုင်များကိုစာရင်းပြသသည်"),
		"my/rm.md":    memo("rm", "", nil, "ဖိုင်ကိုဖျက်သည်"),
		"en/latin.md": memo("Latin", "", nil, "list the files in a directory"),
	}
	v := newVault(t, files)
	for _, c := range []struct{ query, want string }{
		{"แสดงรายการไฟล์", "th/ls.md"},
		{"คัดลอกไฟล์", "th/cp.md"},
		{"ສະແດງລາຍການໄຟລ໌", "lo/ls.md"},
		{"ລຶບໄຟລ໌", "lo/rm.md"},
		{"ចម្លងឯកសារ", "km/cp.md"},
		{"លុបឯកសារ", "km/rm.md"},
		{"စာရင်းပြသ", "my/ls.md"},
		{"ဖိုင်ကိုဖျက်", "my/rm.md"},
	} {
		for _, m := range []engine.Mode{engine.FullText, engine.Hybrid} {
			p, err := v.e.Search(t.Context(), engine.Query{Text: c.query, Mode: m, Now: now0})
			if err != nil {
				t.Errorf("%s %q: %v", m, c.query, err)
				continue
			}
			if got := paths(p); len(got) == 0 || got[0] != c.want {
				t.Errorf("%s %q → %v, want %s first", m, c.query, got, c.want)
			}
		}
	}
	// Refused only when there truly is no searchable term.
	for _, q := range []string{"the of and", "!!! ???", "、。「」"} {
		if _, err := v.e.Search(t.Context(), engine.Query{Text: q, Mode: engine.FullText, Now: now0}); !errors.Is(err, engine.ErrNoTerms) {
			t.Errorf("%q: err %v, want ErrNoTerms", q, err)
		}
	}
}
