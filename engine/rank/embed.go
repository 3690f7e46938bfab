package rank

import (
	"context"
	"sync"
)

// EmbedOutsideLock runs a search over a corpus guarded by mu, with the
// query embedded while no lock is held: a remote embedder takes a network
// round trip, and a reader holding the read lock that long stalls every
// write (and, behind a waiting write, every read).
//
// check says whether the index can answer the query: err if it cannot,
// done if the answer is the page as it stands (an index being built that
// holds nothing yet). It runs under the read lock before the embedding, so
// that a query the index cannot answer is not embedded, and again after
// it, since a write may have come in between. embed is called only when
// mode needs the query's meaning (not FullText). search then runs under
// the read lock with check's answer, the query's vector and embed's error,
// which it reports where it sees fit (a damaged index first, say).
// EmbedOutsideLock returns check's error or search's.
func EmbedOutsideLock[T any](ctx context.Context, mu *sync.RWMutex, mode Mode,
	check func() (T, bool, error),
	embed func(context.Context) ([]float32, error),
	search func(checked T, qv []float32, embedErr error) error,
) error {
	mu.RLock()
	_, done, err := check()
	mu.RUnlock()
	if err != nil || done {
		return err
	}
	var qv []float32
	var embedErr error
	if mode != FullText {
		qv, embedErr = embed(ctx)
	}
	mu.RLock()
	defer mu.RUnlock()
	checked, done, err := check()
	if err != nil || done {
		return err
	}
	return search(checked, qv, embedErr)
}
