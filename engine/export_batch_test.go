package engine

// SetSyncBatch makes e's syncs apply n files per batch instead of
// batchFiles (1024), so a test shows what happens between batches with a
// few dozen files rather than thousands. Call it before e's first Sync.
func SetSyncBatch(e *Engine, n int) { e.batchFiles = n }
