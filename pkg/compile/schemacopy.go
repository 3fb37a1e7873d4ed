package compile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"cuelang.org/go/cue/load"
	"cuelang.org/go/mod/modfile"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/schema"
)

// One contract language.
//
// The compiler always checks a contract against the contract language
// embedded in it (package schema), whatever copy the module holds: a copy
// under cue.mod/pkg (what `stitch init` writes so plain `cue vet` resolves
// the import) is overlaid file by file with the embedded bytes, and any
// other .cue file there is shadowed by an empty one. When the copy on disk
// differs — older, newer or edited — plain `cue vet` checks a different
// language than `stitch vet`; the compiler says so in a warning naming the
// command that refreshes the copy (`stitch init --upgrade`).

// SchemaCopyDir is where a contract module keeps its copy of the contract
// language (module-relative, slash-separated): the directory cue v0.17.1
// resolves the import stitchkit.dev/stitchkit/schema from without a
// registry, and the one `stitch init` writes and `stitch init --upgrade`
// refreshes.
const SchemaCopyDir = schemaPkgDir

// SchemaFiles returns the .cue files of the contract language embedded in
// this compiler, by file name.
func SchemaFiles() (map[string][]byte, error) {
	entries, err := fs.ReadDir(schema.FS, ".")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".cue") {
			continue
		}
		b, err := fs.ReadFile(schema.FS, e.Name())
		if err != nil {
			return nil, err
		}
		out[e.Name()] = b
	}
	return out, nil
}

// SchemaDrift says how a copy of the contract language differs from the
// embedded one: file names, sorted.
type SchemaDrift struct {
	// Changed files exist in both with different bytes.
	Changed []string
	// Missing files are embedded but absent from the copy.
	Missing []string
	// Extra files are in the copy only.
	Extra []string
}

// None reports whether the copy is identical.
func (d SchemaDrift) None() bool { return len(d.Changed)+len(d.Missing)+len(d.Extra) == 0 }

// String lists the differences: "contract.cue differs, tools.cue is
// missing, old.cue is extra".
func (d SchemaDrift) String() string {
	var parts []string
	for _, f := range d.Changed {
		parts = append(parts, f+" differs")
	}
	for _, f := range d.Missing {
		parts = append(parts, f+" is missing")
	}
	for _, f := range d.Extra {
		parts = append(parts, f+" is extra")
	}
	return strings.Join(parts, ", ")
}

// CompareSchema compares copy (file name → bytes of the .cue files of a
// copy of the contract language) with the embedded language.
func CompareSchema(copy map[string][]byte) (SchemaDrift, error) {
	embedded, err := SchemaFiles()
	if err != nil {
		return SchemaDrift{}, err
	}
	var d SchemaDrift
	for name, b := range embedded {
		c, ok := copy[name]
		switch {
		case !ok:
			d.Missing = append(d.Missing, name)
		case !bytes.Equal(c, b):
			d.Changed = append(d.Changed, name)
		}
	}
	for name := range copy {
		if _, ok := embedded[name]; !ok {
			d.Extra = append(d.Extra, name)
		}
	}
	slices.Sort(d.Changed)
	slices.Sort(d.Missing)
	slices.Sort(d.Extra)
	return d, nil
}

// ReadSchemaCopy reads the .cue files of the directory dir; nil (and no
// error) when dir does not exist.
func ReadSchemaCopy(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".cue") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = b
	}
	return out, nil
}

// overlayEmbedded places the embedded contract language at dir in overlay
// and shadows every other .cue file of the copy (names in copy) with an
// empty file of package schema, so nothing on disk adds to or changes the
// language the contract is checked against.
func overlayEmbedded(overlay map[string]load.Source, dir string, copy map[string][]byte) error {
	embedded, err := SchemaFiles()
	if err != nil {
		return err
	}
	for name := range copy {
		if _, ok := embedded[name]; !ok {
			overlay[filepath.Join(dir, name)] = load.FromString("package schema\n")
		}
	}
	for name, b := range embedded {
		overlay[filepath.Join(dir, name)] = load.FromBytes(b)
	}
	return nil
}

// overlaySchema overlays the embedded language at root's cue.mod/pkg.
func overlaySchema(overlay map[string]load.Source, root string) error {
	return overlayEmbedded(overlay, filepath.Join(root, filepath.FromSlash(schemaPkgDir)), nil)
}

// moduleKind says where a module resolves the contract language from.
type moduleKind int

const (
	// ownCopy: from cue.mod/pkg (a copy, or nothing yet).
	ownCopy moduleKind = iota
	// stitchkitModule: the module is stitchkit.dev/stitchkit itself, whose
	// schema/ folder is the language (this repository).
	stitchkitModule
	// registryDep: module.cue declares a dependency on
	// stitchkit.dev/stitchkit, resolved through a CUE registry; the
	// compiler leaves that resolution alone.
	registryDep
)

// kindOf classifies a module file.
func kindOf(modFile []byte) moduleKind {
	f, err := modfile.ParseNonStrict(modFile, "module.cue")
	if err != nil {
		// A broken module file is reported by the load; until then,
		// judge by its text as best as possible.
		if bytes.Contains(modFile, []byte(`"stitchkit.dev/stitchkit`)) {
			return stitchkitModule
		}
		return ownCopy
	}
	if p, _, _ := strings.Cut(f.Module, "@"); p == "stitchkit.dev/stitchkit" {
		return stitchkitModule
	}
	for dep := range f.Deps {
		if p, _, _ := strings.Cut(dep, "@"); p == "stitchkit.dev/stitchkit" {
			return registryDep
		}
	}
	return ownCopy
}

// ModuleSchemaDir returns, for a module whose cue.mod/module.cue holds
// moduleFile, the module-relative directory of the contract language the
// compiler overlays with the embedded one: [SchemaCopyDir] for a contract
// module, "schema" for the stitchkit.dev/stitchkit module itself. ok is
// false when the module resolves the language from a CUE registry
// dependency, which the compiler leaves alone.
func ModuleSchemaDir(moduleFile []byte) (dir string, ok bool) {
	switch kindOf(moduleFile) {
	case stitchkitModule:
		return "schema", true
	case registryDep:
		return "", false
	}
	return schemaPkgDir, true
}

// schemaCopyWarning is the warning about a copy of the contract language
// at file (the copy's first file, relative to the contract directory)
// that differs from the embedded one; inRepo is set for the schema/
// folder of the stitchkit module itself.
func schemaCopyWarning(dirShown string, d SchemaDrift, file string, inRepo bool) Diagnostic {
	pos := graph.Pos{File: file, Line: 1, Col: 1}
	if inRepo {
		return Diagnostic{Pos: pos, Rule: "schema-copy", Path: "",
			Message: fmt.Sprintf("%s differs from the contract language built into this stitch (%s): stitch checks contracts with the built-in one, plain `cue vet` with %s; rebuild stitch from this checkout (go run ./cmd/stitch)", dirShown, d, dirShown)}
	}
	return Diagnostic{Pos: pos, Rule: "schema-copy", Path: "",
		Message: fmt.Sprintf("%s differs from the contract language built into this stitch (%s): stitch checks contracts with the built-in one, but plain `cue vet` checks this copy, a different language; refresh it with `stitch init --upgrade` (run in the contract directory: it finds the module root)", dirShown, d)}
}

// vendoredSchema prepares the contract language of a module rooted at
// root for the contract directory abs: it overlays the embedded language
// over the module's copy and returns the warning when that copy differs
// (nil when it is identical or absent, or the module resolves the
// language from a registry).
func vendoredSchema(overlay map[string]load.Source, abs, root string, modFile []byte) (*Diagnostic, error) {
	rel, ok := ModuleSchemaDir(modFile)
	if !ok {
		return nil, nil
	}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	copy, err := ReadSchemaCopy(dir)
	if err != nil {
		return nil, err
	}
	if err := overlayEmbedded(overlay, dir, copy); err != nil {
		return nil, err
	}
	if copy == nil {
		return nil, nil
	}
	d, err := CompareSchema(copy)
	if err != nil || d.None() {
		return nil, err
	}
	relDir, err := filepath.Rel(abs, dir)
	if err != nil {
		relDir = dir
	}
	relDir = filepath.ToSlash(relDir)
	w := schemaCopyWarning(relDir, d, path.Join(relDir, driftFile(d, copy)), rel == "schema")
	return &w, nil
}

// inMemorySchema is vendoredSchema for AnalyzeFiles: the copy is the
// files given under the schema directory.
func inMemorySchema(overlay map[string]load.Source, files map[string][]byte) (*Diagnostic, error) {
	var copy map[string][]byte
	for name, b := range files {
		clean := path.Clean(filepath.ToSlash(name))
		if dir, file := path.Split(clean); path.Clean(dir) == schemaPkgDir && strings.HasSuffix(file, ".cue") {
			if copy == nil {
				copy = map[string][]byte{}
			}
			copy[file] = b
		}
	}
	if err := overlayEmbedded(overlay, path.Join(virtualRoot, schemaPkgDir), copy); err != nil {
		return nil, err
	}
	if copy == nil {
		return nil, nil
	}
	d, err := CompareSchema(copy)
	if err != nil || d.None() {
		return nil, err
	}
	w := schemaCopyWarning(schemaPkgDir, d, path.Join(schemaPkgDir, driftFile(d, copy)), false)
	return &w, nil
}

// driftFile is the file of a copy a drift warning points at: the first
// changed or extra file, else the copy's first file, else "" (the copy's
// directory itself).
func driftFile(d SchemaDrift, copy map[string][]byte) string {
	if cands := slices.Concat(d.Changed, d.Extra); len(cands) > 0 {
		return slices.Min(cands)
	}
	names := make([]string, 0, len(copy))
	for n := range copy {
		names = append(names, n)
	}
	if len(names) == 0 {
		return ""
	}
	return slices.Min(names)
}
