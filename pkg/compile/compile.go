// Package compile turns a CUE contract folder into the canonical
// [graph.Graph]: it loads the package with cue/load, checks it against the
// contract language (package stitchkit.dev/stitchkit/schema), generates one
// canonical JSON Schema 2020-12 document per schema node, and runs the graph
// checks CUE cannot express (cross references, route and tool-name
// collisions, JSON Schema representability).
//
// Start with [Compile]:
//
//	g, err := compile.Compile(ctx, "./contracts")
//	var cerr *compile.Error
//	if errors.As(err, &cerr) {
//		for _, d := range cerr.Diagnostics {
//			fmt.Println(d) // file:line:col: rule: message
//		}
//	}
//	out, _ := g.Encode() // graph.json
//
// Every contract mistake is a positioned [Diagnostic]; all of them are
// reported at once, sorted by position. The compiler never panics: an
// internal failure becomes an error naming the contract directory.
//
// Output is deterministic: the graph bytes depend only on the contract's
// meaning, never on the order files, definitions, blocks or fields are
// written in.
package compile

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/token"

	"stitchkit.dev/stitchkit/pkg/graph"
	"stitchkit.dev/stitchkit/schema"
)

// CUEVersion is the cuelang.org/go version go.mod pins. The graph records
// the version actually linked when the build information is available.
const CUEVersion = "v0.17.1"

// GeneratorName identifies this compiler in [graph.Generator].
const GeneratorName = "stitchkit.dev/stitchkit"

// virtualRoot is the directory an in-memory contract is placed in.
const virtualRoot = "/stitchkit-virtual/contract"

// schemaPkgDir is where a contract module resolves the schema import when it
// does not vendor it (cue.mod/pkg is resolved by cue without a registry).
const schemaPkgDir = "cue.mod/pkg/stitchkit.dev/stitchkit/schema"

// Diagnostic is one positioned contract mistake.
type Diagnostic struct {
	// Pos is where the mistake is; Pos.File is relative to the contract
	// directory (slash-separated).
	Pos graph.Pos
	// Rule names the check that failed, e.g. "cue" for errors reported by
	// CUE itself, "params-cover-path", "duplicate-route".
	Rule string
	// Message says what is wrong and, where it helps, how to fix it.
	Message string
}

// String formats d as "file:line:col: rule: message".
func (d Diagnostic) String() string {
	return d.Pos.String() + ": " + d.Rule + ": " + d.Message
}

// Error is returned when a contract has mistakes. It holds every
// diagnostic, sorted by file, line, column and message.
type Error struct {
	// Dir is the contract directory as given to Compile.
	Dir string
	// Diagnostics are never empty.
	Diagnostics []Diagnostic
}

// Error returns the diagnostics, one per line.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "contract %s has %d error(s):", e.Dir, len(e.Diagnostics))
	for _, d := range e.Diagnostics {
		b.WriteString("\n")
		b.WriteString(d.String())
	}
	return b.String()
}

// Compile loads the CUE package in dir and compiles it into a graph.
//
// dir is resolved inside its CUE module (the nearest parent holding
// cue.mod/module.cue). When the module neither is stitchkit.dev/stitchkit
// nor vendors the schema under cue.mod/pkg, the embedded schema is overlaid,
// so a contract compiles even before `stitch init` copied it; when there is
// no module at all, dir becomes the root of a virtual one.
//
// Contract mistakes are returned as *[Error]; other failures (unreadable
// directory, cancelled ctx) as plain errors.
func Compile(ctx context.Context, dir string) (g *graph.Graph, err error) {
	defer recoverInto(dir, &err)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("contract %s: %w", dir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("contract %s: not a directory", dir)
	}
	overlay := map[string]load.Source{}
	cfg := &load.Config{Dir: abs, Overlay: overlay}
	root, modFile := findModule(abs)
	if root == "" {
		root = abs
		overlay[filepath.Join(abs, "cue.mod", "module.cue")] = load.FromString(defaultModuleFile)
		cfg.ModuleRoot = abs
		if err := overlaySchema(overlay, abs); err != nil {
			return nil, err
		}
	} else if !bytes.Contains(modFile, []byte(`"stitchkit.dev/stitchkit`)) {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(schemaPkgDir))); err != nil {
			if err := overlaySchema(overlay, root); err != nil {
				return nil, err
			}
		}
	}
	return compile(ctx, dir, abs, cfg)
}

// CompileFiles compiles an in-memory contract: files maps slash-separated
// paths (relative to the contract directory) to CUE source. Without a
// "cue.mod/module.cue" entry the contract directory is the root of a virtual
// module; the schema package is always available at its import path.
// Diagnostics name the paths as given.
func CompileFiles(ctx context.Context, files map[string][]byte) (g *graph.Graph, err error) {
	defer recoverInto("(in memory)", &err)
	overlay := map[string]load.Source{}
	for name, src := range files {
		clean := path.Clean(filepath.ToSlash(name))
		if path.IsAbs(clean) || strings.HasPrefix(clean, "../") || clean == ".." {
			return nil, fmt.Errorf("contract file %q: path must be relative to the contract directory", name)
		}
		overlay[path.Join(virtualRoot, clean)] = load.FromBytes(src)
	}
	if _, ok := files["cue.mod/module.cue"]; !ok {
		overlay[path.Join(virtualRoot, "cue.mod/module.cue")] = load.FromString(defaultModuleFile)
	}
	if _, ok := overlay[path.Join(virtualRoot, schemaPkgDir, "contract.cue")]; !ok {
		if err := overlaySchema(overlay, virtualRoot); err != nil {
			return nil, err
		}
	}
	cfg := &load.Config{Dir: virtualRoot, ModuleRoot: virtualRoot, Overlay: overlay}
	return compile(ctx, "(in memory)", virtualRoot, cfg)
}

const defaultModuleFile = "module: \"stitchkit.local/contract@v0\"\nlanguage: version: \"" + CUEVersion + "\"\n"

func overlaySchema(overlay map[string]load.Source, root string) error {
	entries, err := fs.ReadDir(schema.FS, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".cue") {
			continue
		}
		b, err := fs.ReadFile(schema.FS, e.Name())
		if err != nil {
			return err
		}
		overlay[filepath.Join(root, filepath.FromSlash(schemaPkgDir), e.Name())] = load.FromBytes(b)
	}
	return nil
}

// findModule returns the nearest directory at or above dir holding
// cue.mod/module.cue, and that file's contents.
func findModule(dir string) (string, []byte) {
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "cue.mod", "module.cue")); err == nil {
			return dir, b
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

func recoverInto(dir string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("contract %s: internal compiler error (please report it with the contract): %v\n%s", dir, r, debug.Stack())
	}
}

// compile loads the package of cfg.Dir and builds the graph.
func compile(ctx context.Context, display, abs string, cfg *load.Config) (*graph.Graph, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	insts := load.Instances([]string{"."}, cfg)
	if len(insts) != 1 {
		return nil, fmt.Errorf("contract %s: expected one CUE package, found %d", display, len(insts))
	}
	inst := insts[0]
	c := &compiler{dir: abs, display: display}
	c.index = newPosIndex(abs, inst.Files)
	if inst.Err != nil {
		c.cueErrors(inst.Err)
		return nil, c.result()
	}
	cctx := cuecontext.New()
	v := cctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		c.cueErrors(err)
		return nil, c.result()
	}
	if err := v.Validate(cue.Concrete(true)); err != nil {
		c.cueErrors(err)
		return nil, c.result()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.ctx = ctx
	c.cue = cctx
	c.root = v
	c.schemaDocs = schemaDocs()
	g := c.build()
	if len(c.diags) > 0 {
		return nil, c.result()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return g, nil
}

// cueVersion returns the linked cuelang.org/go version.
func cueVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "cuelang.org/go" {
				if d.Replace != nil && d.Replace.Version != "" {
					return d.Replace.Version
				}
				if d.Version != "" && d.Version != "(devel)" {
					return d.Version
				}
			}
		}
	}
	return CUEVersion
}

// compiler accumulates the diagnostics of one compilation.
type compiler struct {
	ctx        context.Context
	dir        string // absolute contract directory
	display    string
	cue        *cue.Context
	root       cue.Value
	index      *posIndex
	g          *graph.Graph
	schemaDocs map[string]bool
	diags      []Diagnostic
	seen       map[string]bool
}

func (c *compiler) result() error {
	if len(c.diags) == 0 {
		return nil
	}
	ds := slices.Clone(c.diags)
	slices.SortFunc(ds, func(a, b Diagnostic) int {
		if a.Pos.File != b.Pos.File {
			return strings.Compare(a.Pos.File, b.Pos.File)
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line - b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col - b.Pos.Col
		}
		if a.Rule != b.Rule {
			return strings.Compare(a.Rule, b.Rule)
		}
		return strings.Compare(a.Message, b.Message)
	})
	return &Error{Dir: c.display, Diagnostics: slices.CompactFunc(ds, func(a, b Diagnostic) bool { return a == b })}
}

// report adds a diagnostic at pos.
func (c *compiler) report(pos graph.Pos, rule, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: pos, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// cueErrors turns CUE errors into diagnostics. A position in the
// contract's own files is preferred to one in the schema package: the
// first one at or after the label of the failing field, else the label
// itself. The "conflicting values" alternatives of one failed disjunction
// are folded into a single message listing the allowed values.
func (c *compiler) cueErrors(err error) {
	type alt struct {
		pos     graph.Pos
		got     string
		allowed []string
	}
	alts := map[string]*alt{}
	var order []string
	for _, e := range cueerrors.Errors(err) {
		path := strings.Join(e.Path(), ".")
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		pos := c.errorPos(e, path)
		if strings.HasSuffix(format, "errors in empty disjunction:") {
			if alts[path] == nil {
				alts[path] = &alt{pos: pos}
				order = append(order, path)
			}
			continue
		}
		if format == "conflicting values %s and %s" && len(args) == 2 {
			a := alts[path]
			if a == nil {
				a = &alt{pos: pos}
				alts[path] = a
				order = append(order, path)
			}
			if !a.pos.IsValid() || strings.HasPrefix(a.pos.File, "cue.mod/") {
				a.pos = pos
			}
			a.allowed = append(a.allowed, fmt.Sprint(args[0]))
			a.got = fmt.Sprint(args[1])
			continue
		}
		if path == "surfaces.mcp" && strings.Contains(msg, "matchN") {
			msg += ": surfaces.mcp takes either default or named, never both"
		}
		if path != "" {
			msg = path + ": " + msg
		}
		c.report(pos, "cue", "%s", msg)
	}
	for _, path := range order {
		a := alts[path]
		if len(a.allowed) == 0 {
			c.report(a.pos, "cue", "%s: no alternative of the disjunction matches", path)
			continue
		}
		slices.Sort(a.allowed)
		c.report(a.pos, "cue", "%s: %s is not one of the allowed values %s", path, a.got, strings.Join(slices.Compact(a.allowed), ", "))
	}
}

// errorPos picks the most useful position of a CUE error.
func (c *compiler) errorPos(e cueerrors.Error, path string) graph.Pos {
	var cands []graph.Pos
	var fallback graph.Pos
	ps := append([]token.Pos{e.Position()}, cueerrors.Positions(e)...)
	for _, p := range ps {
		gp := c.relPos(p)
		if !gp.IsValid() {
			continue
		}
		if strings.HasPrefix(gp.File, "cue.mod/") || strings.HasPrefix(gp.File, "../") {
			if !fallback.IsValid() {
				fallback = gp
			}
			continue
		}
		cands = append(cands, gp)
	}
	slices.SortFunc(cands, func(a, b graph.Pos) int {
		if posLess(a, b) {
			return -1
		}
		if posLess(b, a) {
			return 1
		}
		return 0
	})
	var target graph.Pos
	if c.index != nil && path != "" {
		if c.index.has(path) {
			target = c.index.pos[path]
		}
	}
	if target.IsValid() {
		for _, p := range cands {
			if p.File == target.File && !posLess(p, target) {
				return p
			}
		}
		return target
	}
	if len(cands) > 0 {
		return cands[len(cands)-1]
	}
	if c.index != nil && path != "" {
		if p := c.index.lookup(path); p.IsValid() {
			return p
		}
	}
	return fallback
}

// relPos converts a CUE position to one relative to the contract directory.
func (c *compiler) relPos(p token.Pos) graph.Pos {
	if !p.IsValid() {
		return graph.Pos{}
	}
	pp := p.Position()
	file := pp.Filename
	if rel, err := filepath.Rel(c.dir, file); err == nil {
		file = rel
	}
	return graph.Pos{File: filepath.ToSlash(file), Line: pp.Line, Col: pp.Column}
}

// schemaDocs returns the text of every comment group of the schema package:
// Generate copies doc comments into "description", and the contract
// language's own docs must not leak into a user's schemas.
func schemaDocs() map[string]bool {
	docs := map[string]bool{}
	entries, _ := fs.ReadDir(schema.FS, ".")
	for _, e := range entries {
		b, err := fs.ReadFile(schema.FS, e.Name())
		if err != nil {
			continue
		}
		f, err := parseFile(e.Name(), b)
		if err != nil {
			continue
		}
		ast.Walk(f, func(n ast.Node) bool {
			for _, cg := range ast.Comments(n) {
				docs[strings.TrimSpace(cg.Text())] = true
			}
			return true
		}, nil)
	}
	return docs
}
