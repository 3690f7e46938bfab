package transcript

import (
	"regexp"
	"strings"
)

// What each agent writes into its transcripts as the user's or the
// assistant's words but is its own: injected context, notices, envelopes,
// protocol tags. One table per agent, applied to every text block of a
// message before it is indexed; docs/transcripts.md lists the same, per
// agent, in words. Harness content is data here so that a new case is a new
// row, not new code.

// harnessAct is what a row does with the text it matches.
type harnessAct int

const (
	// cutOut removes every match and keeps the rest as prose (a reminder
	// spliced into a prompt, an envelope before it, a tag inside a reply).
	cutOut harnessAct = iota
	// dropAll: a text that opens with a match is the harness's, whole.
	dropAll
	// commandArgs: a text holding a match is a slash command's echo; its
	// prose is the command's arguments ("/cmd args" keeps "args", a bare
	// "/cmd" nothing).
	commandArgs
)

// harnessRow is one row of an agent's table.
type harnessRow struct {
	role string // RoleUser or RoleAssistant
	act  harnessAct
	re   *regexp.Regexp
	what string // what the harness writes there, for the docs
}

func row(role string, act harnessAct, expr, what string) harnessRow {
	return harnessRow{role: role, act: act, re: regexp.MustCompile(expr), what: what}
}

// openers matches a text that opens with one of the literal prefixes.
func openers(prefixes ...string) string {
	q := make([]string, len(prefixes))
	for i, p := range prefixes {
		q[i] = regexp.QuoteMeta(p)
	}
	return `^\s*(?:` + strings.Join(q, "|") + `)`
}

// element matches one XML-like element the harness writes, contents and all.
func element(tag string) string { return `(?s)<` + tag + `>.*?</` + tag + `>` }

// commandArgsRe finds a slash command's arguments in its echo.
var commandArgsRe = regexp.MustCompile(`(?s)<command-args>(.*?)</command-args>`)

// untrustedBlock is OpenClaw's envelope: a "Label (untrusted …):" line and
// the fenced JSON block after it.
const untrustedBlock = "(?s)(?:Conversation info|Sender|Replied message|Thread starter|Forwarded message|Chat history since last reply) \\(untrusted[^)\\n]*\\):\\s*(?:```(?:json)?\\n.*?```\\s*)?"

// bareCommand is a slash command alone, without arguments: no prose.
const bareCommand = `^\s*/[A-Za-z][\w:-]*\s*$`

// harness holds each agent's table, applied in order.
var harness = map[Kind][]harnessRow{
	ClaudeCode: {
		row(RoleUser, cutOut, element("system-reminder"), "<system-reminder> context spliced into a prompt"),
		row(RoleUser, cutOut, element("ide_opened_file"), "<ide_opened_file> notes of the IDE extension"),
		row(RoleUser, cutOut, element("ide_selection"), "<ide_selection> notes of the IDE extension"),
		row(RoleUser, cutOut, element("ide_diagnostics"), "<ide_diagnostics> notes of the IDE extension"),
		row(RoleUser, commandArgs, `<command-name>`, "slash command echoes (<command-name>, <command-message>): only <command-args> is prose"),
		row(RoleUser, dropAll, openers("<task-notification>"), "<task-notification> reports of background tasks"),
		row(RoleUser, dropAll, openers("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>"), "output of local commands"),
		row(RoleUser, dropAll, openers("<bash-input>", "<bash-stdout>", "<bash-stderr>"), "shell mode (!) commands and their output"),
		row(RoleUser, dropAll, openers("<user-prompt-submit-hook>", "Operation stopped by hook"), "hook output"),
		row(RoleUser, dropAll, openers("Caveat: The messages below were generated"), "the caveat before local command output"),
		row(RoleUser, dropAll, openers("[Request interrupted by user"), "interruption notes"),
	},
	Codex: {
		row(RoleUser, dropAll, openers("<environment_context>", "<user_instructions>", "<permissions instructions>", "<INSTRUCTIONS>", "# AGENTS.md instructions"), "environment and instructions sent as user messages"),
		row(RoleUser, dropAll, openers("<user_shell_command>", "<turn_aborted>"), "shell commands run by the user, abort notes"),
	},
	Gemini: {
		row(RoleUser, dropAll, `^\s*System: Please continue\.?\s*$`, `the automatic "System: Please continue."`),
	},
	Pi: {
		row(RoleUser, dropAll, bareCommand, "a bare /command sent as a prompt"),
	},
	OpenClaw: {
		row(RoleUser, dropAll, bareCommand, "a bare /command sent as a prompt"),
		row(RoleUser, cutOut, untrustedBlock, `the "Conversation info / Sender (untrusted metadata)" envelope before every message`),
		row(RoleUser, cutOut, `(?m)^\[media attached[^\]\n]*\]\s*$\n?`, "[media attached: …] notes"),
		row(RoleUser, cutOut, `(?m)^To send an image back.*$\n?`, "the reply-with-image instruction"),
		row(RoleUser, cutOut, `^\s*\[[^\]\n]*\d{4}-\d{2}-\d{2}[^\]\n]*\]\s*`, "the channel and time stamp before a message ([Wed 2026-04-15 15:56 GMT+1])"),
		row(RoleUser, dropAll, openers("Read HEARTBEAT.md if it exists"), "the heartbeat prompt"),
		row(RoleAssistant, cutOut, `\[\[reply_to(?:_current|:[^\]\n]*)\]\]\s*`, "[[reply_to_current]] and [[reply_to:ID]] tags"),
		row(RoleAssistant, dropAll, `^\s*(?:NO_REPLY|HEARTBEAT_OK)\s*$`, "NO_REPLY and HEARTBEAT_OK tokens"),
	},
}

// cleanText applies kind's table to one text of role: the prose left ("" if
// none) and whether the harness wrote some of it.
func cleanText(kind Kind, role, s string) (string, bool) {
	harnessed := false
	for _, h := range harnessRows(kind) {
		if h.role != role {
			continue
		}
		switch h.act {
		case cutOut:
			if h.re.MatchString(s) {
				s = h.re.ReplaceAllString(s, "")
				harnessed = true
			}
		case commandArgs:
			if h.re.MatchString(s) {
				harnessed = true
				m := commandArgsRe.FindStringSubmatch(s)
				if m == nil {
					return "", true
				}
				s = m[1]
			}
		case dropAll:
			if h.re.MatchString(s) {
				return "", true
			}
		}
	}
	return strings.TrimSpace(s), harnessed
}
