package sessions_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mnemo/engine/enginetest"
	"mnemo/engine/sessions"
	"mnemo/engine/transcript"
)

// The sessions benchmarks are skipped unless asked for: they need the
// prebuilt LoCoMo transcripts or write a 1 GB history.
//
//	MNEMO_SESSIONS_LOCOMO=/tmp/mnemo-bench/sessions-locomo go test ./engine/sessions -run '^$' -bench BenchmarkSessionsLoCoMo -benchtime 1x
//	MNEMO_SESSIONS_SYNTH=1 go test ./engine/sessions -run '^$' -bench BenchmarkSessionsSynthetic -benchtime 1x -timeout 2h
//
// MNEMO_SESSIONS_SYNTH_DIR keeps the generated history (and reuses it);
// MNEMO_SESSIONS_SYNTH_SESSIONS and MNEMO_SESSIONS_SYNTH_MB scale it
// (default 2000 sessions, 1024 MB); MNEMO_SESSIONS_SYNTH_QUERIES sets how
// many queries are timed (default 500).

// BenchmarkSessionsLoCoMo syncs the LoCoMo transcripts of the sessions
// benchmark and runs its 1,982 questions in hybrid mode, per project, as
// the batch does: sync time, peak RSS and the query latency percentiles.
func BenchmarkSessionsLoCoMo(b *testing.B) {
	dir := os.Getenv("MNEMO_SESSIONS_LOCOMO")
	if dir == "" {
		b.Skip("set MNEMO_SESSIONS_LOCOMO to the sessions-locomo build")
	}
	var qs []sessions.Query
	f, err := os.Open(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q struct{ Query, Project string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			b.Fatal(err)
		}
		qs = append(qs, sessions.Query{Text: q.Query, Project: q.Project, Limit: 10, MaxHits: 10})
	}
	f.Close()
	benchSessions(b, filepath.Join(dir, "home"), qs)
}

// BenchmarkSessionsSynthetic generates a history of about 1 GB across
// 2,000 Claude Code sessions (mostly tool output, as real ones are) and
// measures the same figures on it.
func BenchmarkSessionsSynthetic(b *testing.B) {
	if os.Getenv("MNEMO_SESSIONS_SYNTH") == "" {
		b.Skip("set MNEMO_SESSIONS_SYNTH=1 to generate and index a 1 GB history")
	}
	home := os.Getenv("MNEMO_SESSIONS_SYNTH_DIR")
	if home == "" {
		home = b.TempDir()
	}
	count, mb := envInt("MNEMO_SESSIONS_SYNTH_SESSIONS", 2000), envInt("MNEMO_SESSIONS_SYNTH_MB", 1024)
	start := time.Now()
	n, err := generateHistory(filepath.Join(home, ".claude", "projects"), count, int64(mb)<<20)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("history: %d bytes in %d sessions (generated in %s)", n, count, time.Since(start).Round(time.Second))
	rng := rand.New(rand.NewPCG(7, 7))
	words := newVocabulary(rng)
	var qs []sessions.Query
	for range envInt("MNEMO_SESSIONS_SYNTH_QUERIES", 500) {
		qs = append(qs, sessions.Query{Text: pick(rng, synthTopics) + " " + words.sentence(2), Limit: 10, MaxHits: 3})
	}
	benchSessions(b, home, qs)
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// homeSources are a home's default transcript sources, for a benchmark.
func homeSources(home string) []sessions.Source {
	var srcs []sessions.Source
	for _, s := range transcript.DefaultSources(home, func(string) string { return "" }) {
		srcs = append(srcs, sessions.TranscriptSource(s, transcript.Options{}))
	}
	return srcs
}

// syncFresh opens a new index of srcs and syncs it: the open corpus, the
// sync's report, its wall and CPU time.
func syncFresh(b *testing.B, srcs []sessions.Source) (*sessions.Corpus, sessions.Report, time.Duration, time.Duration) {
	b.Helper()
	ctx := context.Background()
	s, err := sessions.Open(ctx, sessions.Config{IndexDir: b.TempDir(), Sources: srcs})
	if err != nil {
		b.Fatal(err)
	}
	t0, c0 := time.Now(), cpuTime()
	rep, err := s.Sync(ctx, false)
	if err != nil {
		b.Fatal(err)
	}
	return s, rep, time.Since(t0), cpuTime() - c0
}

func benchSessions(b *testing.B, home string, qs []sessions.Query) {
	ctx := context.Background()
	srcs := homeSources(home)
	for range b.N {
		s, rep, sync, syncCPU := syncFresh(b, srcs)
		b.ReportMetric(syncCPU.Seconds(), "sync-cpu-s")
		st, _ := s.Status(ctx)
		// Wall time, and the process's CPU time: on a shared machine the
		// second is the steadier measure of what one query costs.
		lat := make([]time.Duration, 0, len(qs))
		cpu := make([]time.Duration, 0, len(qs))
		for _, q := range qs {
			t, c := time.Now(), cpuTime()
			if _, err := s.Search(ctx, q); err != nil {
				b.Fatalf("%q: %v", q.Text, err)
			}
			lat = append(lat, time.Since(t))
			cpu = append(cpu, cpuTime()-c)
		}
		slices.Sort(lat)
		slices.Sort(cpu)
		p := func(x float64) float64 { return float64(lat[int(x*float64(len(lat)-1))].Microseconds()) / 1000 }
		pc := func(x float64) float64 { return float64(cpu[int(x*float64(len(cpu)-1))].Microseconds()) / 1000 }
		b.ReportMetric(pc(0.5), "cpu-p50-ms")
		b.ReportMetric(pc(0.99), "cpu-p99-ms")
		b.ReportMetric(sync.Seconds(), "sync-s")
		b.ReportMetric(float64(rep.Messages), "messages")
		b.ReportMetric(p(0.5), "p50-ms")
		b.ReportMetric(p(0.99), "p99-ms")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peakRSS-MiB")
		b.Logf("sync %s (CPU %s): %d sessions, %d messages, full-text %d MiB, state %d MiB; %d queries p50 %.1f ms p99 %.1f ms; peak RSS %d MiB",
			sync.Round(time.Millisecond), syncCPU.Round(time.Millisecond), st.Sessions, st.Messages, st.FullText>>20, st.State>>20, len(qs), p(0.5), p(0.99), peakRSS()>>20)
		s.Close()
	}
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	d, _ := enginetest.ProcessCPU()
	return d
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.Sys)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

var (
	synthTopics = []string{"retry budget", "ledger migration", "postgres index", "cache eviction", "rate limiter", "auth token refresh",
		"deploy pipeline", "flaky test", "memory leak", "schema change", "websocket reconnect", "billing export", "search ranking",
		"feature flag", "backup restore", "queue backpressure", "timezone bug", "image resize", "pdf export", "dark mode"}
	synthWords = strings.Fields(`decide because measure latency throughput rollback config service handler request response error
		timeout worker batch commit branch review merge release metric alert dashboard budget quota tenant invoice customer
		shard replica leader follower snapshot compaction vacuum partition cursor offset stream buffer parser lexer token
		module package interface struct method closure goroutine channel mutex deadlock race profile benchmark allocation`)
)

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

// vocabulary draws words by Zipf's law (s = 1.1) from 20,000 made-up words
// after the common ones above, so that, as in real prose, a few words are
// everywhere and most are rare.
type vocabulary struct {
	words []string
	z     *rand.Zipf
}

func newVocabulary(r *rand.Rand) *vocabulary {
	v := &vocabulary{words: append([]string{}, synthWords...)}
	syll := strings.Fields("ka lo mi ne ru ta shi vo ple gra dun mer tis ock ban fel zor quin")
	for len(v.words) < 20_000 {
		w := ""
		for range 2 + r.IntN(3) {
			w += syll[r.IntN(len(syll))]
		}
		v.words = append(v.words, w)
	}
	v.z = rand.NewZipf(r, 1.1, 1, uint64(len(v.words)-1))
	return v
}

func (v *vocabulary) sentence(k int) string {
	ws := make([]string, k)
	for j := range ws {
		ws[j] = v.words[v.z.Uint64()]
	}
	return strings.Join(ws, " ")
}

// generateHistory writes sessions Claude Code transcripts of about total
// bytes under root (reusing one already there), one project folder per 20
// sessions: per turn a user question, an assistant answer with thinking,
// a tool call and a large tool result (most of a real transcript's bytes).
func generateHistory(root string, sessions int, total int64) (int64, error) {
	per := total / int64(sessions)
	var written int64
	for i := range sessions {
		dir := filepath.Join(root, fmt.Sprintf("-home-dev-project-%03d", i/20))
		path := filepath.Join(dir, fmt.Sprintf("00000000-0000-4000-8000-%012d.jsonl", i))
		if fi, err := os.Stat(path); err == nil && fi.Size() >= per*9/10 {
			written += fi.Size()
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return written, err
		}
		n, err := writeSynthSession(path, i, per)
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

func writeSynthSession(path string, i int, size int64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(uint64(i), 1))
	session := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	cwd := "/home/dev/project-" + strconv.Itoa(i/20)
	t := time.Date(2025, 1, 1, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * 4 * time.Hour)
	var n int64
	parent := any(nil)
	sentence := newVocabulary(rng).sentence
	emit := func(v map[string]any) {
		v["sessionId"], v["cwd"], v["timestamp"], v["isSidechain"] = session, cwd, t.Format(time.RFC3339), false
		t = t.Add(20 * time.Second)
		b, _ := json.Marshal(v)
		b = append(b, '\n')
		w.Write(b)
		n += int64(len(b))
	}
	for turn := 0; n < size; turn++ {
		topic := pick(rng, synthTopics)
		u, a, tu := fmt.Sprintf("u%d", turn), fmt.Sprintf("a%d", turn), fmt.Sprintf("t%d", turn)
		emit(map[string]any{"type": "user", "uuid": u, "parentUuid": parent,
			"message": map[string]any{"role": "user", "content": "About the " + topic + ": " + sentence(20+rng.IntN(40)) + "?"}})
		emit(map[string]any{"type": "assistant", "uuid": tu, "parentUuid": u, "message": map[string]any{"id": "msg_" + tu, "role": "assistant",
			"content": []any{map[string]any{"type": "thinking", "thinking": sentence(40)}, map[string]any{"type": "tool_use", "id": "toolu_" + tu, "name": "Bash", "input": map[string]any{"command": "grep -rn " + pick(rng, synthWords) + " ."}}}}})
		out := make([]byte, 0, 4000)
		for len(out) < 2000+rng.IntN(6000) {
			out = append(out, "src/"+pick(rng, synthWords)+".go:"+strconv.Itoa(rng.IntN(900))+": "+sentence(8)+"\n"...)
		}
		emit(map[string]any{"type": "user", "uuid": tu + "r", "parentUuid": tu, "message": map[string]any{"role": "user",
			"content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_" + tu, "content": string(out)}}}})
		emit(map[string]any{"type": "assistant", "uuid": a, "parentUuid": tu + "r", "message": map[string]any{"id": "msg_" + a, "role": "assistant",
			"content": []any{map[string]any{"type": "text", "text": "For the " + topic + " we " + sentence(60+rng.IntN(120)) + "."}}}})
		parent = a
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return n, err
	}
	return n, f.Close()
}
