package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// IgnoreFile holds a vault's own ignore rules, in .gitignore syntax (globs,
// "**", a trailing "/" for folders only, "!" to re-include, "#" comments),
// matched against paths relative to the memory folder.
const IgnoreFile = ".mnemoignore"

// defaultIgnore lists dependency folders: the markdown in them is other
// people's (package READMEs and changelogs), never memories. They come
// before the vault's own rules, so a line "!vendor/" in .mnemoignore brings
// one back.
var defaultIgnore = []string{
	"node_modules/",
	"bower_components/",
	"jspm_packages/",
	"vendor/",
	"__pycache__/",
	"site-packages/",
}

// Rules decide which paths the scan, the watcher, List and the write
// tools leave out. Skip is the one function they all ask.
type Rules struct {
	m        gitignore.Matcher
	indexRel string // the index folder relative to the vault; "" if it lies outside
	// byName: every pattern matches a name alone (no "/" but a trailing
	// one), as the defaults do; then an entry whose folder is not skipped
	// is judged by its own name, which keeps the scan of a large vault cheap.
	byName bool
}

// Skip reports whether rel (a clean relative path; isDir if it names a
// folder) is left out: a hidden name anywhere on the path (the index
// folder, editors' temporary files, .git), the index folder itself, or a
// path the rules ignore — itself or any folder above it, since a file in an
// ignored folder is never reached by the scan.
func (ir *Rules) Skip(rel string, isDir bool) bool {
	if rel == "" {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if ir.skipParts(parts[:i], true) {
			return true
		}
	}
	return ir.skipParts(parts, isDir)
}

// skipEntry is Skip for an entry whose folder is known not to be skipped:
// the walk, which never enters a skipped folder, asks this, and so stays
// linear in the depth of the tree.
func (ir *Rules) skipEntry(rel string, isDir bool) bool {
	if rel == "" {
		return false
	}
	if ir.byName && (ir.indexRel == "" || !InFolder(ir.indexRel, rel)) {
		return ir.skipParts([]string{path.Base(rel)}, isDir)
	}
	return ir.skipParts(strings.Split(rel, "/"), isDir)
}

// skipParts judges the last element of a split path on its own.
func (ir *Rules) skipParts(parts []string, isDir bool) bool {
	if strings.HasPrefix(parts[len(parts)-1], ".") {
		return true
	}
	if ir.indexRel != "" && strings.Join(parts, "/") == ir.indexRel {
		return true
	}
	return ir.m.Match(parts, isDir)
}

// parseRules builds the rules from defaultIgnore and the text of a
// .mnemoignore file.
func parseRules(text string, indexRel string) *Rules {
	var ps []gitignore.Pattern
	byName := true
	for _, l := range append(slices.Clone(defaultIgnore), strings.Split(text, "\n")...) {
		l = strings.TrimRight(l, " \t\r")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if strings.Contains(strings.TrimSuffix(l, "/"), "/") || strings.Contains(l, "**") {
			byName = false
		}
		ps = append(ps, gitignore.ParsePattern(l, nil))
	}
	return &Rules{m: gitignore.NewMatcher(ps), indexRel: indexRel, byName: byName}
}

// LoadRules reads the vault's rules afresh through r (a missing
// .mnemoignore means the defaults) and keeps them for the watcher. A
// .mnemoignore that is not a regular file, or is too large, is an error
// rather than silently ignored: indexing without the rules could pull in
// what the user excluded.
func (v *Vault) LoadRules(r *os.Root) (*Rules, error) {
	data, _, err := v.ReadIn(r, IgnoreFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ignore rules: %w", err)
	}
	ir := parseRules(v.tool+string(data), v.indexRel)
	v.ignore.Store(ir)
	return ir, nil
}

// Rules are the ignore rules last loaded, or the defaults before any load.
func (v *Vault) Rules() *Rules {
	if ir := v.ignore.Load(); ir != nil {
		return ir
	}
	return parseRules(v.tool, v.indexRel)
}
