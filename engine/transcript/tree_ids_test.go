package transcript

import (
	"fmt"
	"strings"
	"testing"
)

// Every id comes back as it was written, whether it is held packed (a
// canonical lowercase UUID) or as a string (anything else), and numbers
// are handed out in order.
func TestTreeIDs(t *testing.T) {
	ids := []string{
		"e72a5e50-929d-40ed-91df-3b217448aae6",  // packed
		"E72A5E50-929D-40ED-91DF-3B217448AAE6",  // upper case: kept as written
		"e72a5e50-929d-40ed-91df-3b217448aae",   // short
		"e72a5e50-929d-40ed-91df-3b217448aae6x", // long
		"e72a5e50x929d-40ed-91df-3b217448aae6",  // no dash where one goes
		"e72a5e50-929d-40ed-91df-3b217448aag6",  // not hex
		"00000000-0000-0000-0000-000000000000",  // packed as zero bytes
		"msg_01",
		"",
	}
	var a treeArena
	defer a.free()
	tab := newTreeIDs(&a)
	for i, id := range ids {
		if _, ok := tab.lookup(id); ok {
			t.Fatalf("%q numbered before it was added", id)
		}
		if k := tab.add(id); k != int32(i) {
			t.Fatalf("%q numbered %d, want %d", id, k, i)
		}
	}
	for i, id := range ids {
		k, ok := tab.lookup(id)
		if !ok || k != int32(i) {
			t.Errorf("lookup(%q) = %d, %v; want %d", id, k, ok, i)
		}
		if got := tab.id(int32(i)); got != id {
			t.Errorf("id(%d) = %q, want %q", i, got, id)
		}
	}
	if _, packed := packUUID(ids[0]); !packed {
		t.Errorf("a canonical UUID is not packed")
	}
	if _, packed := packUUID(ids[1]); packed {
		t.Errorf("an upper-case UUID is packed: it would come back lower-case")
	}
}

// TestTreeIDsGrow numbers enough UUIDs to grow the table many times, ones
// alike but for a byte among them, with other ids in between: each is
// found under its number and comes back as written, and an id not added
// is not found.
func TestTreeIDsGrow(t *testing.T) {
	var a treeArena
	defer a.free()
	tab := newTreeIDs(&a)
	const n = 3*treeIDPage + 17
	id := func(i int) string {
		if i%1000 == 999 {
			return fmt.Sprintf("msg_%d", i)
		}
		return fmt.Sprintf("%08x-0000-4000-8000-%012x", i>>8, i&0xff)
	}
	for i := range n {
		if k := tab.add(id(i)); k != int32(i) {
			t.Fatalf("%q numbered %d, want %d", id(i), k, i)
		}
	}
	for i := range n {
		if k, ok := tab.lookup(id(i)); !ok || k != int32(i) {
			t.Fatalf("lookup(%q) = %d, %v; want %d", id(i), k, ok, i)
		}
		if got := tab.id(int32(i)); got != id(i) {
			t.Fatalf("id(%d) = %q, want %q", i, got, id(i))
		}
	}
	if k, ok := tab.lookup(id(n)); ok {
		t.Errorf("lookup(%q) = %d, an id never added", id(n), k)
	}
}

// TestPackUUID: packUUID packs exactly the UUIDs written as 8-4-4-4-12
// lowercase hex digits, to the bytes those digits spell: every byte
// value put at every position of a canonical UUID, against a plain
// reading of the digits.
func TestPackUUID(t *testing.T) {
	const canon = "0123abcd-4567-89ef-fedc-ba9876543210"
	plain := func(s string) ([16]byte, bool) {
		var u [16]byte
		if len(s) != 36 {
			return u, false
		}
		hex := strings.ReplaceAll(s, "-", "")
		if len(hex) != 32 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return u, false
		}
		for j := range 16 {
			var v byte
			for _, c := range []byte(hex[2*j : 2*j+2]) {
				switch {
				case c >= '0' && c <= '9':
					v = v<<4 | (c - '0')
				case c >= 'a' && c <= 'f':
					v = v<<4 | (c - 'a' + 10)
				default:
					return u, false
				}
			}
			u[j] = v
		}
		return u, true
	}
	packed := 0
	for i := range len(canon) {
		for c := range 256 {
			b := []byte(canon)
			b[i] = byte(c)
			s := string(b)
			gu, gok := packUUID(s)
			wu, wok := plain(s)
			if gok != wok || gok && gu != wu {
				t.Fatalf("packUUID(%q) = %x, %v; want %x, %v", s, gu, gok, wu, wok)
			}
			if gok {
				packed++
				if formatUUID(gu) != s {
					t.Errorf("formatUUID(packUUID(%q)) = %q", s, formatUUID(gu))
				}
			}
		}
	}
	if want := 32*16 + 4; packed != want { // 32 digits of 16 values, and each dash as it is
		t.Errorf("%d variants packed, want %d", packed, want)
	}
	for _, s := range []string{"", canon[:35], canon + "0", strings.ToUpper(canon)} {
		if _, ok := packUUID(s); ok {
			t.Errorf("packUUID(%q) packed it", s)
		}
	}
}
