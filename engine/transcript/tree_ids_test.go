package transcript

import "testing"

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
