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

	"stitchkit.dev/stitchkit/schema"
)

func init() {
	commandFactories = append(commandFactories, func(env *cliEnv) *cobra.Command {
		return &cobra.Command{
			Use:   "init [DIR]",
			Short: "Scaffold a CUE module with the contract language and a starter contract",
			Long: `init creates, in DIR (default "."), a CUE module whose plain ` + "`cue vet`" + `
resolves the contract language without a registry:

  cue.mod/module.cue
  cue.mod/pkg/stitchkit.dev/stitchkit/schema/*.cue   (the contract language)
  contract.cue                                       (a starter contract)

It never overwrites a file: when any of them exists, it changes nothing and
exits 1.`,
			Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				dir := "."
				if len(args) == 1 {
					dir = args[0]
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
	})
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
	entries, err := fs.ReadDir(schema.FS, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := fs.ReadFile(schema.FS, e.Name())
		if err != nil {
			return nil, err
		}
		files["cue.mod/pkg/stitchkit.dev/stitchkit/schema/"+e.Name()] = b
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
