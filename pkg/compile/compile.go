// Package compile turns a CUE contract folder into the canonical
// [graph.Graph]: it loads the package with cue/load, checks it against the
// contract language (package stitchkit.dev/stitchkit/schema), generates one
// canonical JSON Schema 2020-12 document per schema node, and runs the graph
// checks CUE cannot express that need no projection (cross references,
// path parameters, unknown definition fields, JSON Schema
// representability). The checks that need the projector — route
// conflicts, tool names and surfaces, MCP policy — live one layer up, in
// package stitchkit.dev/stitchkit/pkg/check, which is what `stitch vet`
// runs; the compiler never imports the projector.
//
// Users do not start here: the one compile is check.Compile, which runs
// this package's [Analyze] and then the projector's checks, so it accepts
// exactly what `stitch vet` accepts:
//
//	g, err := check.Compile(ctx, "./contracts")
//	var cerr *compile.Error
//	if errors.As(err, &cerr) {
//		for _, d := range cerr.Diagnostics {
//			fmt.Println(d) // file:line:col: rule: message
//		}
//	}
//	out, _ := g.Encode() // graph.json
//
// Every contract mistake is a positioned [Diagnostic] (with its CUE path,
// and the other places a two-party mistake involves); all of them are
// reported at once, sorted by position. [Analyze] returns the whole
// [Result] — the graph built from every intact node, diagnostics and
// warnings — for a layer that adds checks of its own (package check is
// that layer). The compiler never panics: an
// internal failure becomes an error naming the contract directory.
//
// Output is deterministic: the graph bytes depend only on the contract's
// meaning, never on the order files, definitions, blocks or fields are
// written in.
package compile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/load"
	"cuelang.org/go/cue/token"

	"stitchkit.dev/stitchkit/pkg/compile/internal/cueschema"
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
	// Path is the CUE path of the node the mistake is about
	// ("services.tasks.operations.list.path"), "" when there is none
	// (a file without a package clause).
	Path string
	// Related are the other places a two-party mistake involves — the
	// other route of a duplicate, the other operation with the same tool
	// name, the other declaration of a conflicting value — in source
	// order. Empty for a mistake that has one place.
	Related []Related
}

// Related is another place a [Diagnostic] involves.
type Related struct {
	// Pos is the place, relative to the contract directory like
	// Diagnostic.Pos.
	Pos graph.Pos
	// Path is the CUE path of the node there.
	Path string
	// Message says what is there ("services.books.operations.bySlug
	// serves GET /books/{slug}").
	Message string
}

// String formats d as "file:line:col: rule: message", followed by one
// line per related place, each starting with a tab and in the same form:
//
//	c.cue:9:24: duplicate-route: books.get: route GET /books/{id} is also served by books.bySlug ...
//		c.cue:10:27: duplicate-route: books.bySlug serves GET /books/{slug}
func (d Diagnostic) String() string {
	s := d.Pos.String() + ": " + d.Rule + ": " + d.Message
	for _, r := range d.Related {
		s += "\n\t" + r.Pos.String() + ": " + d.Rule + ": " + r.Message
	}
	return s
}

// Error is returned when a contract has mistakes. It holds every
// diagnostic, sorted by file, line, column and message.
type Error struct {
	// Dir is the contract directory as given to Analyze.
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

// Analyze loads the CUE package in dir and returns everything the
// compilation found (see [Result]): the graph built from every node CUE
// found intact, the contract's own mistakes (CUE's errors and the graph
// checks that need no projection) and warnings.
//
// Analyze is the lower level of the one compile: it skips the checks that
// need the projector (route conflicts, tool names and surfaces, MCP
// policy), so a Result without diagnostics is not yet a contract `stitch
// vet` accepts. Users call check.Compile (package
// stitchkit.dev/stitchkit/pkg/check), which runs Analyze and then those
// checks; call Analyze only to add checks of your own.
//
// dir is resolved inside its CUE module (the nearest parent holding
// cue.mod/module.cue). When the module neither is stitchkit.dev/stitchkit
// nor vendors the schema under cue.mod/pkg, the embedded schema is overlaid,
// so a contract compiles even before `stitch init` copied it; when there is
// no module at all, dir becomes the root of a virtual one. The error is
// non-nil only for failures that are not contract mistakes (unreadable
// directory, cancelled ctx).
func Analyze(ctx context.Context, dir string) (r *Result, err error) {
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
	var warning *Diagnostic
	if root == "" {
		root = abs
		overlay[filepath.Join(abs, "cue.mod", "module.cue")] = load.FromString(defaultModuleFile)
		cfg.ModuleRoot = abs
		if err := overlaySchema(overlay, abs); err != nil {
			return nil, err
		}
	} else if warning, err = vendoredSchema(overlay, abs, root, modFile); err != nil {
		return nil, err
	}
	return compile(ctx, dir, abs, cfg, warning)
}

// AnalyzeFiles is [Analyze] for an in-memory contract: files maps
// slash-separated paths (relative to the contract directory) to CUE
// source. Without a "cue.mod/module.cue" entry the contract directory is
// the root of a virtual module; the schema package is always available at
// its import path. Diagnostics name the paths as given.
func AnalyzeFiles(ctx context.Context, files map[string][]byte) (r *Result, err error) {
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
	warning, err := inMemorySchema(overlay, files)
	if err != nil {
		return nil, err
	}
	cfg := &load.Config{Dir: virtualRoot, ModuleRoot: virtualRoot, Overlay: overlay}
	return compile(ctx, "(in memory)", virtualRoot, cfg, warning)
}

const defaultModuleFile = "module: \"stitchkit.local/contract@v0\"\nlanguage: version: \"" + CUEVersion + "\"\n"

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

// vetOptions are the options plain `cue vet -c` validates with: every
// regular field must be concrete, definitions and hidden fields are
// checked but need not be concrete, and every error is reported (not only
// the first one, as Value.Err does).
var vetOptions = []cue.Option{cue.Attributes(true), cue.Definitions(true), cue.Hidden(true), cue.Concrete(true)}

// compile loads the package of cfg.Dir and builds the graph.
//
// CUE errors do not hide the graph checks: the graph is built from every
// node whose own value is error-free (an operation, a service's own
// fields, a runtime tool, ...), the broken ones are skipped, and the graph
// checks run on what is left, so one run reports everything a user must
// fix. A graph is returned only when there is no diagnostic at all.
//
// warning, when set, is the compiler's own warning about the load (a copy
// of the contract language that differs from the embedded one).
func compile(ctx context.Context, display, abs string, cfg *load.Config, warning *Diagnostic) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	insts := load.Instances([]string{"."}, cfg)
	if len(insts) != 1 {
		return nil, fmt.Errorf("contract %s: expected one CUE package, found %d", display, len(insts))
	}
	inst := insts[0]
	c := &compiler{dir: abs, display: display}
	if warning != nil {
		c.warnings = append(c.warnings, *warning)
	}
	if inst.Err != nil {
		c.index = newPosIndex(abs, inst.Files)
		c.loadErrors(inst, cfg)
		return c.result(), nil
	}
	c.scanSources(inst)
	c.orphanedFiles(inst)
	return c.watch(ctx, inst, func(ctx context.Context) (*Result, error) {
		return c.evaluate(ctx, display, inst, cfg)
	})
}

// evaluate builds the loaded package and the graph (see compile). It runs
// under [compiler.watch].
func (c *compiler) evaluate(ctx context.Context, display string, inst *build.Instance, cfg *load.Config) (*Result, error) {
	c.mark("evaluating the contract", "")
	c.schemaDocs = schemaDocs()
	files := c.userFiles(inst.Files)
	aliases := schemaAliases(files)
	closed := closedForm(files, aliases)
	cctx := cuecontext.New()
	v := cctx.BuildInstance(inst)
	if p := c.waitScan(); p != nil {
		panic(p)
	}
	contract, cerr := contractDefinition(cctx, inst, cfg)
	if cerr != nil {
		if err := v.Err(); err != nil {
			c.cueErrors(err)
			return c.result(), nil
		}
		return nil, fmt.Errorf("contract %s: loading %s: %w", display, schemaImportPath, cerr)
	}
	if !referencesContract(files, aliases) {
		c.report(c.packagePos(files), "contract-root", "contract root must unify with schema.#Contract: import %q and write the root as schema.#Contract & { ... }", schemaImportPath)
	}
	// Close the root whatever form it was written in: a bare embedded
	// schema.#Contract leaves the package open under CUE's embedding
	// rules, and a root that forgot it (or unifies with some other
	// package's #Contract) is not checked at all. Unifying with the
	// definition itself reports every unknown field ("field not allowed")
	// at the user's label. The recommended form is closed by CUE already
	// and skips the (whole-tree) second unification.
	if !closed {
		v = v.Unify(contract)
	}
	c.closed, c.contract = v, contract
	// v.Err() also reports (the first) error of a nested field; only an
	// error without a path breaks the root itself. Validate reports every
	// error.
	c.mark("validating the contract", "")
	var verr cueerrors.Error
	for _, err := range []error{v.Err(), v.Validate(vetOptions...)} {
		if err != nil {
			verr = cueerrors.Append(verr, cueerrors.Promote(err, ""))
		}
	}
	if verr != nil {
		c.cueErrors(verr)
		if c.broken[""] {
			return c.result(), nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.ctx = ctx
	c.cue = cctx
	c.root = v
	c.build()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.result(), nil
}

// scanSources reads the contract's syntax (the position index and the
// source scans) on a goroutine of its own, beside BuildInstance: both only
// read the loaded AST, and this saves its time on a second core. Use the
// results after waitScan.
func (c *compiler) scanSources(inst *build.Instance) {
	c.scanned = make(chan struct{})
	go func() {
		defer close(c.scanned)
		defer func() {
			if p := recover(); p != nil {
				c.scanPanic = p
				if c.index == nil {
					c.index = &posIndex{dir: c.dir, pos: map[string]graph.Pos{}, all: map[string][]graph.Pos{}}
				}
			}
		}()
		c.index = newPosIndex(c.dir, inst.Files)
		c.structValidators, c.comprehensions = scanSchemaSources(inst)
		c.nestedDefs = sourceDefinitionLabels(inst)
	}()
}

// waitScan waits for scanSources and returns its panic, if any.
func (c *compiler) waitScan() any {
	if c.scanned != nil {
		<-c.scanned
	}
	return c.scanPanic
}

// isBroken reports whether CUE reported an error at node or below it (the
// graph checks skip such nodes).
func (c *compiler) isBroken(node string) bool { return c.broken[node] }

// skip records that the node with selection key key is left out of the
// graph.
func (c *compiler) skip(key string) {
	if c.skipped == nil {
		c.skipped = map[string]bool{}
	}
	c.skipped[key] = true
}

// markBroken records the error path p and every parent of it.
func (c *compiler) markBroken(p string) {
	if c.broken == nil {
		c.broken = map[string]bool{}
		c.errAt = map[string]bool{}
	}
	c.errAt[p] = true
	for {
		c.broken[p] = true
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	c.broken[""] = c.broken[""] || p == ""
}

// loadErrors reports a package that cannot be loaded: a module file without
// a language version, missing imports (each of them), files without a
// package clause.
func (c *compiler) loadErrors(inst *build.Instance, cfg *load.Config) {
	var nfe *load.NoFilesError
	if errors.As(inst.Err, &nfe) || len(inst.IgnoredFiles) > 0 {
		for _, f := range inst.IgnoredFiles {
			if strings.Contains(fmt.Sprint(f.ExcludeReason), "no package name") {
				c.report(graph.Pos{File: c.relFile(f.Filename), Line: 1, Col: 1}, "cue", "%s has no package clause: start the file with `package NAME` (the same name as the other contract files)", c.relFile(f.Filename))
			}
		}
		if len(c.diags) > 0 {
			return
		}
	}
	importFailed := false
	for _, e := range cueerrors.Errors(inst.Err) {
		format, args := e.Msg()
		if format == "import failed" {
			importFailed = true
			continue
		}
		msg := strings.TrimSpace(fmt.Sprintf(format, args...))
		if msg == "" || format == "%s" && len(args) == 0 {
			msg = strings.TrimSpace(e.Error())
		}
		pos := c.relPos(e.Position())
		if !pos.IsValid() && strings.Contains(msg, "module.cue") {
			pos = graph.Pos{File: c.relFile(c.moduleFile(cfg)), Line: 1, Col: 1}
			if strings.Contains(msg, "language version") {
				msg += fmt.Sprintf(": add language: version: %q", CUEVersion)
			}
		}
		c.report(pos, "cue", "%s", msg)
	}
	if importFailed {
		c.importErrors(inst, cfg)
	}
}

// importErrors reports every import of the contract files that does not
// resolve (CUE itself stops at the first one).
func (c *compiler) importErrors(inst *build.Instance, cfg *load.Config) {
	failed := map[string]error{}
	n := len(c.diags)
	for _, f := range c.userFiles(inst.Files) {
		for spec := range f.ImportSpecs() {
			ip, err := literal.Unquote(spec.Path.Value)
			if err != nil {
				continue
			}
			ferr, seen := failed[ip]
			if !seen {
				cp := *cfg
				cp.Tags = nil
				insts := load.Instances([]string{ip}, &cp)
				if len(insts) == 1 && insts[0].Err != nil {
					ferr = insts[0].Err
				}
				failed[ip] = ferr
			}
			if ferr != nil {
				msg := ferr.Error()
				if i := strings.Index(msg, "cannot find"); i >= 0 {
					msg = msg[i:]
				}
				c.report(c.relPos(spec.Path.Pos()), "cue", "import %q failed: %s", ip, oneLine(errors.New(msg)))
			}
		}
	}
	if len(c.diags) == n {
		c.report(graph.Pos{}, "cue", "%s", oneLine(inst.Err))
	}
}

// orphanedFiles reports .cue files of the contract directory that CUE left
// out of the package because they have no package clause.
func (c *compiler) orphanedFiles(inst *build.Instance) {
	for _, f := range append(slices.Clone(inst.IgnoredFiles), inst.OrphanedFiles...) {
		if strings.Contains(fmt.Sprint(f.ExcludeReason), "no package name") {
			c.report(graph.Pos{File: c.relFile(f.Filename), Line: 1, Col: 1}, "cue", "%s has no package clause, so CUE ignores it: start the file with `package %s`", c.relFile(f.Filename), inst.PkgName)
		}
	}
}

// moduleFile is the module.cue of the load.
func (c *compiler) moduleFile(cfg *load.Config) string {
	if cfg.ModuleRoot != "" {
		return filepath.Join(cfg.ModuleRoot, "cue.mod", "module.cue")
	}
	if root, _ := findModule(c.dir); root != "" {
		return filepath.Join(root, "cue.mod", "module.cue")
	}
	return "cue.mod/module.cue"
}

// relFile is file relative to the contract directory (slash-separated).
func (c *compiler) relFile(file string) string {
	if rel, err := filepath.Rel(c.dir, file); err == nil {
		file = rel
	}
	return filepath.ToSlash(file)
}

// schemaImportPath is the import path of the contract language.
const schemaImportPath = "stitchkit.dev/stitchkit/schema"

// contractDefinition returns schema.#Contract: from the package's own
// import of the schema when it has one, else from the schema the module
// resolves (both are the embedded language, overlaid over any copy).
func contractDefinition(cctx *cue.Context, inst *build.Instance, cfg *load.Config) (cue.Value, error) {
	var si *build.Instance
	for _, imp := range inst.Imports {
		if ast.ParseImportPath(imp.ImportPath).Unqualified().String() == schemaImportPath {
			si = imp
			break
		}
	}
	if si == nil {
		insts := load.Instances([]string{schemaImportPath}, cfg)
		if len(insts) != 1 {
			return cue.Value{}, fmt.Errorf("expected one CUE package, found %d", len(insts))
		}
		if insts[0].Err != nil {
			return cue.Value{}, insts[0].Err
		}
		si = insts[0]
	}
	sv := cctx.BuildInstance(si)
	if err := sv.Err(); err != nil {
		return cue.Value{}, err
	}
	def := sv.LookupPath(cue.MakePath(cue.Def("Contract")))
	if !def.Exists() {
		return cue.Value{}, fmt.Errorf("the schema package declares no #Contract")
	}
	return def, nil
}

// userFiles returns the files of the contract package itself (not the
// schema package or anything outside the contract directory).
func (c *compiler) userFiles(files []*ast.File) []*ast.File {
	var out []*ast.File
	for _, f := range files {
		gp := c.relPos(f.Pos())
		if gp.File == "" {
			if rel, err := filepath.Rel(c.dir, f.Filename); err == nil {
				gp.File = filepath.ToSlash(rel)
			} else {
				gp.File = f.Filename
			}
		}
		if strings.HasPrefix(gp.File, "cue.mod/") || strings.HasPrefix(gp.File, "../") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// schemaAliases maps each contract file to the names under which it
// imports the contract language (stitchkit.dev/stitchkit/schema): the
// import's alias, else its package name.
func schemaAliases(files []*ast.File) map[*ast.File]map[string]bool {
	out := map[*ast.File]map[string]bool{}
	for _, f := range files {
		for spec := range f.ImportSpecs() {
			raw, err := literal.Unquote(spec.Path.Value)
			if err != nil {
				continue
			}
			ip := ast.ParseImportPath(raw)
			if ip.Path != schemaImportPath {
				continue
			}
			name := ip.Qualifier
			if spec.Name != nil {
				name = spec.Name.Name
			}
			if name == "" || name == "_" || name == "." {
				continue
			}
			if out[f] == nil {
				out[f] = map[string]bool{}
			}
			out[f][name] = true
		}
	}
	return out
}

// isContractRef reports whether e is NAME.#Contract where NAME is an
// import of the contract language in its file (a #Contract of any other
// package is not the contract language).
func isContractRef(e ast.Expr, names map[string]bool) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	if name, ok := labelName(sel.Sel); !ok || name != "#Contract" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && names[x.Name]
}

// closedForm reports whether every file writes its root in the
// recommended form, so CUE itself already closes the package against
// schema.#Contract: at top level only imports, lets, definitions, hidden
// fields and embeddings of the form X.#Contract & {...}. A bare embedded
// X.#Contract next to regular sibling fields is open and is not this form.
func closedForm(files []*ast.File, aliases map[*ast.File]map[string]bool) bool {
	found := false
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.Package, *ast.ImportDecl, *ast.Attribute, *ast.CommentGroup, *ast.LetClause:
			case *ast.Field:
				name, ok := labelName(d.Label)
				if !ok || !(strings.HasPrefix(name, "#") || strings.HasPrefix(name, "_")) {
					return false
				}
				if _, isIdent := d.Label.(*ast.Ident); !isIdent {
					return false // "#x" as a string label is a regular field
				}
			case *ast.EmbedDecl:
				if !contractConjunction(d.Expr, aliases[f]) {
					return false
				}
				found = true
			default:
				return false
			}
		}
	}
	return found
}

// contractConjunction reports whether e is X.#Contract & ... (in any
// operand order, possibly parenthesised), X naming the contract language.
func contractConjunction(e ast.Expr, names map[string]bool) bool {
	var ops []ast.Expr
	var flatten func(e ast.Expr)
	flatten = func(e ast.Expr) {
		switch x := e.(type) {
		case *ast.ParenExpr:
			flatten(x.X)
		case *ast.BinaryExpr:
			if x.Op == token.AND {
				flatten(x.X)
				flatten(x.Y)
				return
			}
			ops = append(ops, e)
		default:
			ops = append(ops, e)
		}
	}
	flatten(e)
	if len(ops) < 2 {
		return false
	}
	for _, op := range ops {
		if isContractRef(op, names) {
			return true
		}
	}
	return false
}

// referencesContract reports whether the package mentions X.#Contract
// anywhere (the embedding or the & form), X being an import of
// stitchkit.dev/stitchkit/schema; without it, plain cue vet checks nothing
// of the contract language.
func referencesContract(files []*ast.File, aliases map[*ast.File]map[string]bool) bool {
	found := false
	for _, f := range files {
		names := aliases[f]
		if len(names) == 0 {
			continue
		}
		ast.Walk(f, func(n ast.Node) bool {
			if found {
				return false
			}
			if e, ok := n.(ast.Expr); ok && isContractRef(e, names) {
				found = true
				return false
			}
			return true
		}, nil)
	}
	return found
}

// packagePos is the position of the package clause of the first contract
// file (in name order).
func (c *compiler) packagePos(files []*ast.File) graph.Pos {
	var best graph.Pos
	for _, f := range files {
		var p token.Pos
		for _, d := range f.Decls {
			if pkg, ok := d.(*ast.Package); ok {
				p = pkg.Name.Pos()
				break
			}
		}
		gp := c.relPos(p)
		if !gp.IsValid() || strings.HasPrefix(gp.File, "cue.mod/") || strings.HasPrefix(gp.File, "../") {
			continue
		}
		if !best.IsValid() || posLess(gp, best) {
			best = gp
		}
	}
	return best
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
	// translator translates every schema node; warn collects the
	// warnings of the node being translated.
	translator *cueschema.Translator
	warn       []*cueschema.Warning
	warned     map[warningKey]bool
	schemaNode string // the schema node being translated (for warnings)
	// trees are the translated schemas by digest, read by the checks.
	trees map[graph.Digest]any
	// structValidators: a file of the contract calls a struct or list
	// validator (see scanSchemaSources).
	structValidators bool
	// comprehensions: a file of the contract holds a comprehension
	// (cueschema.Options.NoConditionalFields).
	comprehensions bool
	// nestedDefs are the definition labels a schema node could take from
	// the sources (see definitionLabels); nil means unknown (check every
	// node).
	nestedDefs definitionLabels
	// scanned is closed when scanSources is done; scanPanic is its panic.
	scanned   chan struct{}
	scanPanic any
	// progress is what the compilation is doing, for the watchdog.
	progress progress
	warnings []Diagnostic
	// closed is the package root unified with schema.#Contract; it
	// explains "field not allowed" errors.
	closed   cue.Value
	contract cue.Value // schema.#Contract
	// broken holds every node path at or above a CUE error ("" when an
	// error has no path): the graph checks skip those nodes.
	broken map[string]bool
	errAt  map[string]bool // the error paths themselves
	// skipped are the selection keys ("service.action", "service.*",
	// "runtime.NAME") of nodes left out of the graph because CUE reported
	// errors in them; skipSurfaces is set when the surfaces or the policy
	// themselves are broken.
	skipped      map[string]bool
	skipSurfaces bool
}

func (c *compiler) result() *Result {
	return &Result{
		Dir:          c.display,
		Graph:        c.g,
		Diagnostics:  SortDiagnostics(c.diags),
		Warnings:     SortDiagnostics(c.warnings),
		skipped:      c.skipped,
		skipSurfaces: c.skipSurfaces,
		index:        c.index,
		root:         c.root,
	}
}

// SortDiagnostics returns a sorted copy of ds (by file, line, column,
// rule, message) without repeats.
func SortDiagnostics(ds []Diagnostic) []Diagnostic {
	if len(ds) == 0 {
		return nil
	}
	ds = slices.Clone(ds)
	slices.SortFunc(ds, compareDiagnostics)
	return slices.CompactFunc(ds, func(a, b Diagnostic) bool { return compareDiagnostics(a, b) == 0 })
}

// compareDiagnostics orders diagnostics by file, line, column, rule,
// message, path and related places.
func compareDiagnostics(a, b Diagnostic) int {
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
	if a.Message != b.Message {
		return strings.Compare(a.Message, b.Message)
	}
	if a.Path != b.Path {
		return strings.Compare(a.Path, b.Path)
	}
	return slices.CompareFunc(a.Related, b.Related, func(x, y Related) int {
		if x.Pos != y.Pos {
			if posLess(x.Pos, y.Pos) {
				return -1
			}
			return 1
		}
		return cmp.Or(strings.Compare(x.Path, y.Path), strings.Compare(x.Message, y.Message))
	})
}

// report adds a diagnostic at pos.
func (c *compiler) report(pos graph.Pos, rule, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: pos, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// reportPath adds a diagnostic at pos about the node at CUE path path.
func (c *compiler) reportPath(pos graph.Pos, path, rule, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: pos, Rule: rule, Message: fmt.Sprintf(format, args...), Path: path})
}

// declarationConflict returns the places of a conflict between values the
// contract itself declares for one field in several places — a
// "conflicting values" error at a path the contract's files declare more
// than once, none of whose values comes from the contract language — in
// source order, one per declaration; nil for any other error.
func (c *compiler) declarationConflict(e cueerrors.Error) []graph.Pos {
	format, _ := e.Msg()
	if !strings.HasPrefix(format, "conflicting values ") || c.index == nil {
		return nil
	}
	node := nodePath(e.Path())
	decls := c.index.all[node]
	if len(decls) < 2 {
		return nil
	}
	var own []graph.Pos
	for _, p := range append([]token.Pos{e.Position()}, cueerrors.Positions(e)...) {
		gp := c.relPos(p)
		if !gp.IsValid() {
			continue
		}
		if strings.HasPrefix(gp.File, "cue.mod/") || strings.HasPrefix(gp.File, "../") {
			return nil // a constraint of the contract language takes part
		}
		own = append(own, gp)
	}
	// One place per declaration: the conflicting value written on the
	// declaration's line, else the declaration's label.
	var places []graph.Pos
	for _, d := range decls {
		place := d
		for _, p := range own {
			if p.File == d.File && p.Line == d.Line && p.Col > d.Col && (place == d || p.Col < place.Col) {
				place = p
			}
		}
		places = append(places, place)
	}
	return places
}

// reportAt adds a diagnostic about the node at CUE path node, positioned
// where the contract wrote it (or its nearest written parent).
func (c *compiler) reportAt(node, rule, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: c.index.lookup(node), Rule: rule, Message: fmt.Sprintf(format, args...), Path: node})
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
	errs := cueerrors.Errors(err)
	// A field the contract declares in two places with values that
	// conflict is one mistake with two places: say that, pointing at
	// both, instead of folding it into the disjunction its value belongs
	// to ("GET" & "POST" is not a failed #Method).
	declConflict := map[string]bool{}
	for _, e := range errs {
		if places := c.declarationConflict(e); places != nil {
			path := strings.Join(e.Path(), ".")
			if declConflict[path] {
				continue
			}
			declConflict[path] = true
			format, args := e.Msg()
			d := Diagnostic{Pos: places[0], Rule: "cue", Path: path,
				Message: fmt.Sprintf("%s: %s: the field is declared %d times with different values; keep one", path, fmt.Sprintf(format, args...), len(places))}
			for _, p := range places[1:] {
				d.Related = append(d.Related, Related{Pos: p, Path: path, Message: path + ": declared here too"})
			}
			c.diags = append(c.diags, d)
		}
	}
	for _, e := range errs {
		node := nodePath(e.Path())
		c.markBroken(node)
		path := strings.Join(e.Path(), ".")
		if declConflict[path] {
			continue
		}
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if msg == "" || format == "%s" && len(args) == 0 {
			msg = strings.TrimSpace(e.Error())
		}
		pos := c.errorPos(e, node)
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
		if format == "invalid value %v (out of bound %s)" && len(args) == 2 {
			if rule := valueRule(node); rule != "" {
				msg = fmt.Sprintf("invalid value %v: %s", args[0], rule)
			}
		}
		if format == "field not allowed" {
			if rule := keyRule(e.Path()); rule != "" {
				msg += ": " + rule
			} else if hint := c.didYouMean(e.Path()); strings.HasPrefix(hint, "#") {
				msg += fmt.Sprintf(": did you mean %s? (schemas are definition fields, written with #)", hint)
			} else if hint != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", hint)
			}
		}
		if part, ok := exampleWithoutSchema(e.Path(), format, args); ok {
			// Examples refer to #input, #output and #ack directly (see
			// checkExampleSchemas): say what is missing, not how CUE
			// found it.
			c.reportPath(pos, path, "example", "%s: the example gives %s, but the %s declares no #%s, so nothing checks it; declare #%s or remove the example's %s", path, part, exampleOwner(e.Path()), part, part, part)
			continue
		}
		if node == "surfaces.mcp.default" || node == "surfaces.mcp.named" {
			if format == "field is required but not present" {
				continue // the matchN error below says it once
			}
		}
		if node == "surfaces.mcp" && strings.Contains(msg, "matchN") {
			mv := c.closed.LookupPath(cue.ParsePath("surfaces.mcp"))
			hasDefault := mv.LookupPath(cue.MakePath(cue.Str("default"))).Exists()
			hasNamed := mv.LookupPath(cue.MakePath(cue.Str("named"))).Exists()
			if !hasDefault && !hasNamed {
				msg = "surfaces.mcp needs default or named: write default: {include: [...]} for one MCP surface, or named: {NAME: {...}} for several"
			} else {
				msg = "surfaces.mcp takes either default or named, never both"
			}
			c.reportPath(pos, path, "cue", "%s", msg)
			continue
		}
		if path != "" {
			msg = path + ": " + msg
		}
		c.reportPath(pos, path, "cue", "%s", msg)
	}
	for _, path := range order {
		a := alts[path]
		if len(a.allowed) == 0 {
			c.reportPath(a.pos, path, "cue", "%s: no alternative of the disjunction matches", path)
			continue
		}
		slices.Sort(a.allowed)
		c.reportPath(a.pos, path, "cue", "%s: %s is not one of the allowed values %s", path, a.got, strings.Join(slices.Compact(a.allowed), ", "))
	}
}

// nodePath joins a CUE error path the way graph node paths are joined:
// quoted labels ("my-svc") are unquoted.
// exampleWithoutSchema reports whether a CUE error at path is an example
// part (…examples.N.input|output|ack) referring to a schema its node does
// not declare ("cannot reference optional field: #output"), and names the
// part.
func exampleWithoutSchema(path []string, format string, args []any) (string, bool) {
	n := len(path)
	if n < 3 || path[n-3] != "examples" || format != "cannot reference optional field: %s" || len(args) != 1 {
		return "", false
	}
	part := path[n-1]
	if fmt.Sprint(args[0]) != "#"+part {
		return "", false
	}
	return part, true
}

// exampleOwner names the kind of node an example path belongs to.
func exampleOwner(path []string) string {
	switch {
	case len(path) > 0 && path[0] == "runtimeTools":
		return "runtime tool"
	case len(path) > 0 && path[0] == "realtime":
		return "event"
	}
	return "operation"
}

func nodePath(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		if strings.HasPrefix(p, `"`) {
			if u, err := literal.Unquote(p); err == nil {
				p = u
			}
		}
		parts[i] = p
	}
	return join(parts...)
}

// valueRule explains the regular expression a value at node must match,
// for the fields whose expressions are too long to read in an error.
func valueRule(node string) string {
	parts := strings.Split(node, ".")
	last := parts[len(parts)-1]
	switch {
	case node == "version":
		return "version must be a Semantic Versioning 2.0.0 version: MAJOR.MINOR.PATCH without leading zeros, optional -PRERELEASE and +BUILD (e.g. \"1.0.0\", \"1.2.0-rc.1\", \"1.0.0+build.1\")"
	case last == "path" && len(parts) == 5 && parts[0] == "services" && parts[2] == "operations":
		return "paths use net/http pattern syntax: \"/\" or one or more /SEGMENTs, each a literal of [A-Za-z0-9._~-] (not \".\" or \"..\") or a {name} parameter, optionally ending in one {name...}; no trailing or double slash"
	case last == "prefix" && len(parts) == 3 && parts[0] == "services":
		return "a prefix is \"/\" or one or more /SEGMENTs, each a literal of [A-Za-z0-9._~-] (not \".\" or \"..\"); no parameters, no trailing or double slash"
	}
	return ""
}

// keyRule says which naming rule the refused key at the end of path
// breaks when its parent is one of the contract language's maps, or "".
func keyRule(path []string) string {
	n := len(path)
	if n < 2 {
		return ""
	}
	parent := make([]string, n-1)
	copy(parent, path[:n-1])
	for i := range parent {
		if i%2 == 1 && (parent[i-1] == "services" || parent[i-1] == "realtime" || parent[i-1] == "named") {
			parent[i] = "*"
		}
	}
	const ident = "^[A-Za-z][A-Za-z0-9_-]*$"
	if n >= 2 && path[0] == "services" && path[1] == "runtime" {
		return "the service name \"runtime\" is reserved (selection patterns name runtime tools as runtime.NAME): rename the service"
	}
	switch strings.Join(parent, ".") {
	case "errors":
		return "error codes (keys of errors) must match ^[A-Z][A-Z0-9_]*$ (SCREAMING_SNAKE_CASE)"
	case "services":
		return "service names (keys of services) must match " + ident + ", and \"runtime\" is reserved for runtime.NAME selection patterns"
	case "services.*.operations":
		return "action names (keys of operations) must match " + ident
	case "runtimeTools":
		return "runtime tool names (keys of runtimeTools) must match ^[A-Za-z0-9_-]{1,64}$"
	case "realtime":
		return "realtime contract names (keys of realtime) must match " + ident
	case "realtime.*.serverToClient", "realtime.*.clientToServer":
		return "event names must match " + ident
	case "surfaces.mcp.named":
		return "MCP surface names (keys of surfaces.mcp.named) must match " + ident
	}
	return ""
}

// didYouMean returns the field the contract language allows next to the
// refused last element of path whose name is closest to it (a misspelt
// key such as "servcies"), or "".
func (c *compiler) didYouMean(path []string) string {
	if len(path) == 0 || !c.closed.Exists() {
		return ""
	}
	bad := path[len(path)-1]
	sels := make([]cue.Selector, 0, len(path)-1)
	for _, p := range path[:len(path)-1] {
		switch {
		case strings.HasPrefix(p, "#"):
			sels = append(sels, cue.Def(p))
		case p != "" && strings.Trim(p, "0123456789") == "":
			n := 0
			for _, r := range p {
				n = n*10 + int(r-'0')
			}
			sels = append(sels, cue.Index(n))
		default:
			sels = append(sels, cue.Str(p))
		}
	}
	parent := c.closed.LookupPath(cue.MakePath(sels...))
	iter, err := parent.Fields(cue.Optional(true))
	if err != nil && c.contract.Exists() {
		// The parent itself failed (the refused field makes it bottom):
		// ask the contract language.
		parent = c.contract.LookupPath(cue.MakePath(sels...))
		iter, err = parent.Fields(cue.Optional(true))
	}
	if err != nil {
		return ""
	}
	if def := definitionHint(parent, bad); def != "" {
		return def // output: for #output
	}
	best, bestDist, prefix := "", 3, ""
	for iter.Next() {
		if iter.Selector().LabelType() != cue.StringLabel {
			continue // a list index or pattern: no name
		}
		name := iter.Selector().Unquoted()
		if name == bad || iter.Selector().IsDefinition() {
			continue
		}
		lb, ln := strings.ToLower(bad), strings.ToLower(name)
		if d := editDistance(lb, ln); d < bestDist && d*3 <= len(name) {
			best, bestDist = name, d
		}
		// toolName for tool: name: ...
		if len(name) >= 4 && strings.HasPrefix(lb, ln) && len(name) > len(prefix) {
			prefix = name
		}
	}
	if best == "" {
		best = prefix
	}
	return best
}

// editDistance is the optimal-string-alignment distance of a and b
// (insertions, deletions, substitutions and adjacent transpositions).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
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
var schemaDocs = sync.OnceValue(func() map[string]bool {
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
})
