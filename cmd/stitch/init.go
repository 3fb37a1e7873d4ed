package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"stitchkit.dev/stitchkit/pkg/compile"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		var upgrade bool
		cmd := &cobra.Command{
			Use:   "init [DIR]",
			Short: "Scaffold a CUE module with the contract language and a starter contract",
			Long: `init creates, in DIR (default "."), a CUE module whose plain ` + "`cue vet`" + `
resolves the contract language without a registry:

  cue.mod/module.cue
  cue.mod/pkg/stitchkit.dev/stitchkit/schema/*.cue   (the contract language)
  contract.cue                                       (a starter contract)

It never overwrites a file: when any of them exists, it changes nothing and
exits 1.

stitch vet and compile always check a contract against the contract
language built into the stitch binary. The copy under cue.mod/pkg is what
plain ` + "`cue vet`" + ` checks; when it differs from the built-in one (an
older or newer stitch wrote it, or it was edited), stitch vet warns.
init --upgrade refreshes that copy: in the CUE module holding DIR (the
nearest directory at or above DIR with cue.mod/module.cue) it writes the
built-in language into cue.mod/pkg/stitchkit.dev/stitchkit/schema and
removes any other .cue file there, and touches nothing else.`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				dir := dirArg(args)
				if upgrade {
					return upgradeSchema(env, dir)
				}
				files, err := scaffold(dir)
				if err != nil {
					return exitWith(exitFailure, err)
				}
				for _, f := range files {
					fmt.Fprintln(env.stdout, "created", filepath.ToSlash(f))
				}
				fmt.Fprintf(env.stdout, "next: stitch vet %s\n", dir)
				return nil
			},
		}
		cmd.Flags().BoolVar(&upgrade, "upgrade", false, "refresh the copy of the contract language in the module holding DIR, and nothing else")
		return cmd
	})
}

// upgradeSchema makes the copy of the contract language in the module
// holding dir identical to the built-in one and says what it changed.
func upgradeSchema(env *cliEnv, dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return exitWith(exitFailure, err)
	}
	root, modFile := "", []byte(nil)
	for d := abs; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "cue.mod", "module.cue")); err == nil {
			root, modFile = d, b
			break
		}
		if filepath.Dir(d) == d {
			return exitWith(exitFailure, fmt.Errorf("init --upgrade %s: no CUE module (cue.mod/module.cue) at or above it; create one with stitch init", dir))
		}
	}
	rel, ok := compile.ModuleSchemaDir(modFile)
	switch {
	case !ok:
		return exitWith(exitFailure, fmt.Errorf("init --upgrade %s: the module resolves stitchkit.dev/stitchkit from a registry dependency (cue.mod/module.cue deps); update that dependency instead", dir))
	case rel != compile.SchemaCopyDir:
		return exitWith(exitFailure, fmt.Errorf("init --upgrade %s: this is the stitchkit.dev/stitchkit module itself: its %s/ is the contract language, not a copy", dir, rel))
	}
	copyDir := filepath.Join(root, filepath.FromSlash(rel))
	copy, err := compile.ReadSchemaCopy(copyDir)
	if err != nil {
		return exitWith(exitFailure, err)
	}
	drift, err := compile.CompareSchema(copy)
	if err != nil {
		return exitWith(exitFailure, err)
	}
	shown := func(name string) string {
		return filepath.ToSlash(filepath.Join(dir, mustRel(abs, filepath.Join(copyDir, name))))
	}
	if copy != nil && drift.None() {
		fmt.Fprintf(env.stdout, "%s is up to date\n", filepath.ToSlash(filepath.Join(dir, mustRel(abs, copyDir))))
		return nil
	}
	embedded, err := compile.SchemaFiles()
	if err != nil {
		return exitWith(exitFailure, err)
	}
	if err := os.MkdirAll(copyDir, 0o755); err != nil {
		return exitWith(exitFailure, err)
	}
	for _, name := range drift.Extra {
		if err := os.Remove(filepath.Join(copyDir, name)); err != nil {
			return exitWith(exitFailure, err)
		}
		fmt.Fprintln(env.stdout, "removed", shown(name))
	}
	for _, name := range slices.Concat(drift.Changed, drift.Missing) {
		if err := os.WriteFile(filepath.Join(copyDir, name), embedded[name], 0o644); err != nil {
			return exitWith(exitFailure, err)
		}
		verb := "updated"
		if slices.Contains(drift.Missing, name) {
			verb = "created"
		}
		fmt.Fprintln(env.stdout, verb, shown(name))
	}
	return nil
}

// mustRel is target relative to base, or target itself.
func mustRel(base, target string) string {
	if r, err := filepath.Rel(base, target); err == nil {
		return r
	}
	return target
}

var nonName = regexp.MustCompile(`[^a-z0-9_]+`)

// scaffold writes the module files into dir and returns their paths.
func scaffold(dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	pkg := nonName.ReplaceAllString(strings.ToLower(filepath.Base(abs)), "_")
	pkg = strings.Trim(pkg, "_")
	if pkg == "" || pkg[0] < 'a' || pkg[0] > 'z' {
		pkg = "contract"
	}
	files := map[string][]byte{
		"cue.mod/module.cue": []byte("module: \"example.com/" + pkg + "@v0\"\nlanguage: version: \"v0.17.1\"\n"),
		"contract.cue":       []byte(strings.ReplaceAll(starterContract, "PKG", pkg)),
	}
	lang, err := compile.SchemaFiles()
	if err != nil {
		return nil, err
	}
	for name, b := range lang {
		files[compile.SchemaCopyDir+"/"+name] = b
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var existing []string
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(abs, filepath.FromSlash(name))); err == nil {
			existing = append(existing, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if len(existing) > 0 {
		return nil, fmt.Errorf("init %s: refusing to overwrite existing files: %s", dir, strings.Join(existing, ", "))
	}
	var created []string
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return created, err
		}
		if err := os.WriteFile(p, files[name], 0o644); err != nil {
			return created, err
		}
		created = append(created, p)
	}
	return created, nil
}

const starterContract = `// Package PKG is a stitchkit contract. Check it with ` + "`stitch vet .`" + ` (or plain
// ` + "`cue vet .`" + `) and compile it with ` + "`stitch compile .`" + `.
package PKG

import "stitchkit.dev/stitchkit/schema"

// #Item is a schema: definitions are closed, so unknown fields are refused.
#Item: {
	id:   string
	name: string
}

// Keep the root as schema.#Contract & { ... }: plain cue vet refuses unknown
// fields only in this form (stitch vet refuses them in any form).
schema.#Contract & {
	name:    "PKG"
	version: "0.1.0"

	errors: ITEM_NOT_FOUND: {status: 404, message: "Item not found"}

	services: items: operations: {
		// GET /items/ → tool list_items
		list: {
			method: "GET"
			path:   "/"
			desc:   "List items"
			#output: {items: [...#Item]}
		}
		// GET /items/{id} → tool get_item
		get: {
			method: "GET"
			path:   "/{id}"
			desc:   "Get one item"
			#output: #Item
			errors: ["ITEM_NOT_FOUND"]
			examples: [{params: {id: "i1"}, output: {id: "i1", name: "First"}}]
		}
	}
}
`
