package transcript

// treeIDs numbers the ids a region's first pass meets. A long transcript's
// first read is one region of millions of records (a million Claude Code
// messages are ~5.8M records), each with a 36-character UUID: held as
// strings, with a map entry and a slice slot each, they were most of such
// a sync's heap. A UUID in its canonical lowercase form is held here as its
// 16 bytes, and given back as the same string; any other id is held as it
// is.
type treeIDs struct {
	uuids  map[[16]byte]int32
	others map[string]int32
	packed [][16]byte       // by number; zero where the id is not a UUID
	plain  map[int32]string // the ids that are not UUIDs, by number
}

func newTreeIDs() *treeIDs {
	return &treeIDs{uuids: map[[16]byte]int32{}, others: map[string]int32{}, plain: map[int32]string{}}
}

// len is how many ids are numbered.
func (t *treeIDs) len() int32 { return int32(len(t.packed)) }

// lookup is id's number, if it has one.
func (t *treeIDs) lookup(id string) (int32, bool) {
	if u, ok := packUUID(id); ok {
		k, found := t.uuids[u]
		return k, found
	}
	k, found := t.others[id]
	return k, found
}

// add numbers id, which has no number yet, next.
func (t *treeIDs) add(id string) int32 {
	k := t.len()
	if u, ok := packUUID(id); ok {
		t.uuids[u] = k
		t.packed = append(t.packed, u)
		return k
	}
	t.others[id] = k
	t.plain[k] = id
	t.packed = append(t.packed, [16]byte{})
	return k
}

// id is the id numbered k, as it was written.
func (t *treeIDs) id(k int32) string {
	if s, ok := t.plain[k]; ok {
		return s
	}
	return formatUUID(t.packed[k])
}

// packUUID is s's 16 bytes when s is a UUID written as 8-4-4-4-12
// lowercase hex digits (the only form that formatUUID gives back).
func packUUID(s string) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	j := 0
	for i := 0; i < 36; i += 2 {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			i++
		}
		hi, ok1 := lowerHex(s[i])
		lo, ok2 := lowerHex(s[i+1])
		if !ok1 || !ok2 {
			return u, false
		}
		u[j] = hi<<4 | lo
		j++
	}
	return u, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// formatUUID writes u as packUUID reads it.
func formatUUID(u [16]byte) string {
	const digits = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, x := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = digits[x>>4], digits[x&15]
		j += 2
	}
	return string(b[:])
}
