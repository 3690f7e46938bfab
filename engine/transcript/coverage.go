package transcript

// Coverage accounts for what a Read looked at, so that nothing is dropped in
// silence: every line of a JSONL transcript (every record of a whole-file or
// database format) is either indexed — it gave text to a delivered Message —
// or left out for one named Reason. Indexed plus the sum of LeftOut equals
// Lines, always; a test over every reader checks it.
//
// A Read counts only what it consumed for the first time: the lines after
// the cursor it resumed from. When it reads the transcript from its start
// again — after Handler.Reset, after a restart that needed no Reset, and on
// every changed read of a whole-file format (Gemini's .json, CodeArchitect) —
// it counts the whole transcript and sets Whole: the caller replaces its
// totals for that transcript instead of adding to them. An unchanged
// transcript gives zero counts and Whole false.
type Coverage struct {
	Lines   int            `json:"lines"`
	Indexed int            `json:"indexed"`
	LeftOut map[Reason]int `json:"leftOut,omitempty"`
	// Repaired counts parent links that named a record never written and
	// were joined to the previous record instead (Claude Code).
	Repaired int `json:"repaired,omitempty"`
	// Whole: these counts cover the whole transcript; replace, do not add.
	Whole bool `json:"whole,omitempty"`
}

// Reason names why a line was not indexed.
type Reason string

// The reasons a line is left out. A line that holds several parts (text
// beside a tool call) is indexed if any part was; otherwise it takes the
// reason of its first part.
const (
	ToolCall   Reason = "tool-call"        // a tool call, kept only with Options.IncludeTools
	ToolResult Reason = "tool-result"      // a tool's output, likewise
	Thinking   Reason = "thinking"         // thinking or reasoning blocks
	Injected   Reason = "injected"         // harness content: system prompts, environment, hook output, notices
	Sidechain  Reason = "sidechain"        // subagent or sidechain records
	Abandoned  Reason = "abandoned-branch" // a branch the user rewound away from
	Duplicate  Reason = "duplicate"        // a copy of a message already delivered (event echoes, retries)
	Malformed  Reason = "malformed"        // did not parse
	TooLong    Reason = "too-long"         // longer than Options.MaxLineBytes; skipped unread
	Unknown    Reason = "unknown-type"     // a record type this reader does not know
	Foreign    Reason = "other-session"    // a line naming another session (generic JSONL)
	Meta       Reason = "metadata"         // session headers, summaries, snapshots, progress: no message
	Empty      Reason = "empty"            // a message with no text
)

// Count records one line left out for why.
func (c *Coverage) Count(why Reason) {
	c.Lines++
	if c.LeftOut == nil {
		c.LeftOut = make(map[Reason]int)
	}
	c.LeftOut[why]++
}

// CountIndexed records one line that gave text to a delivered message.
func (c *Coverage) CountIndexed() {
	c.Lines++
	c.Indexed++
}

// Add adds o's counts to c.
func (c *Coverage) Add(o Coverage) {
	c.Lines += o.Lines
	c.Indexed += o.Indexed
	c.Repaired += o.Repaired
	for k, v := range o.LeftOut {
		if c.LeftOut == nil {
			c.LeftOut = make(map[Reason]int)
		}
		c.LeftOut[k] += v
	}
}

// Balanced reports whether Indexed plus every reason's count equals Lines.
func (c Coverage) Balanced() bool {
	n := c.Indexed
	for _, v := range c.LeftOut {
		n += v
	}
	return n == c.Lines
}
