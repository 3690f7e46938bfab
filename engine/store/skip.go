package store

// Skip is a source file that was not indexed, and why. Both corpora keep
// their skips in their state store, so status can show them after the
// sync that found them has ended.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}
