package transcript

import (
	"fmt"
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
