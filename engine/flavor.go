package engine

import (
	"fmt"
	"os"
	"path/filepath"

	"mnemo/markdown"
)

// linkRulesVersion changes whenever what markdown.Parse counts as a link
// changes; an index built by other rules (or for another tool's vault) is
// rebuilt, so the graph never mixes two readings of the same files.
// 1: links found by their own inline parser (Foam's reference
// definitions, inline HTML in names), aliases, the tools' flavors.
const linkRulesVersion = 1

// metaLinks is the meta key recording the link rules an index was built by.
const metaLinks = "links"

// detectFlavor names the tool whose link rules the vault at root follows,
// by the files each keeps: Logseq's graph has logseq/config.edn, a Dendron
// workspace dendron.yml (the memory folder may be the workspace or one of
// its vaults, whose root note has root.schema.yml beside it). Anything
// else is read by Obsidian's rules, which Foam shares.
func detectFlavor(root string) markdown.Flavor {
	isFile := func(p ...string) bool {
		fi, err := os.Stat(filepath.Join(p...))
		return err == nil && fi.Mode().IsRegular()
	}
	parent := filepath.Dir(root)
	switch {
	case isFile(root, "logseq", "config.edn") || isFile(parent, "logseq", "config.edn"):
		return markdown.FlavorLogseq
	case isFile(root, "dendron.yml") || isFile(parent, "dendron.yml") || isFile(root, "root.schema.yml"):
		return markdown.FlavorDendron
	}
	return markdown.FlavorObsidian
}

// linkRules is the meta value of metaLinks for this engine.
func (e *Engine) linkRules() string {
	return fmt.Sprintf("%d %s", linkRulesVersion, e.flavor)
}

// parseOptions are the options every parse of a memory uses.
func (e *Engine) parseOptions() markdown.Options {
	return markdown.Options{MaxBytes: e.cfg.MaxFileBytes, Flavor: e.flavor}
}

// toolIgnore is what a tool keeps in a vault that is not memories, as
// ignore rules that come before the vault's own (so .mnemoignore can bring
// it back): Logseq's logseq/ folder holds its configuration and, in bak/
// and version-files/, old copies of pages, which would show every page
// two or three times.
func toolIgnore(f markdown.Flavor) string {
	if f == markdown.FlavorLogseq {
		return "/logseq/\n"
	}
	return ""
}
