package transcript

// The harness tables (harness.go) of the agents added beside the first
// six: the tagged blocks each one's harness adds to what the user typed.

// harnessRows is kind's table.
func harnessRows(kind Kind) []harnessRow {
	if rows, ok := harness[kind]; ok {
		return rows
	}
	return harnessMore[kind]
}

func cut(tag, what string) harnessRow { return row(RoleUser, cutOut, element(tag), what) }

var clineRows = []harnessRow{
	cut("environment_details", "<environment_details>: open tabs, working folder, time, sent with every message"),
	cut("task_progress", "<task_progress> checklists"),
	cut("explicit_instructions", "<explicit_instructions> a slash command expands to"),
}

var harnessMore = map[Kind][]harnessRow{
	Cline: clineRows, RooCode: clineRows, KiloCode: clineRows,
	CursorCLI: {
		cut("user_info", "<user_info>: OS, shell, workspace"),
		cut("attached_files", "<attached_files> the user attached"),
		cut("open_and_recently_viewed_files", "<open_and_recently_viewed_files>"),
		cut("git_status", "<git_status> snapshots"),
		cut("system_reminder", "<system_reminder> notes"),
		cut("rules", "<rules> the project's rules"),
		cut("project_layout", "<project_layout> listings"),
	},
	Factory: {
		cut("system-reminder", "<system-reminder> context spliced into a prompt"),
		cut("environment_context", "<environment_context>"),
	},
	Kimi: {
		cut("system", "<system> notes Kimi adds to a user turn"),
		cut("system-reminder", "<system-reminder> notes"),
	},
	Qwen:     {cut("system-reminder", "<system-reminder> notes")},
	Amp:      {cut("system-reminder", "<system-reminder> notes"), cut("attached_files", "<attached_files>")},
	Crush:    {cut("system-reminder", "<system-reminder> notes")},
	OpenCode: {cut("system-reminder", "<system-reminder> notes")},
	Kiro:     {cut("system-reminder", "<system-reminder> notes"), cut("steering-reminder", "<steering-reminder> steering files")},
	Goose:    {cut("info-msg", "<info-msg> notes Goose adds")},
}
