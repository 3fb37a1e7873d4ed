package compile

import (
	"path/filepath"
	"slices"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"stitchkit.dev/stitchkit/pkg/graph"
)

func parseFile(name string, src []byte) (*ast.File, error) {
	return parser.ParseFile(name, src, parser.ParseComments)
}

// posIndex maps label paths ("services.tasks.operations.list.path") to the
// position of the first label declaring them in the contract's own files.
//
// CUE values report positions of their first conjunct, which for a contract
// is usually the schema package; the index points at what the user wrote.
// It follows nested structs, `a: b: c:` shorthands, embeddings and `&`/`|`
// operands; fields produced by comprehensions or references are found
// through their nearest indexed parent.
type posIndex struct {
	dir string
	pos map[string]graph.Pos
	// all holds every declaration of a path, in source order.
	all map[string][]graph.Pos
}

func newPosIndex(dir string, files []*ast.File) *posIndex {
	ix := &posIndex{dir: dir, pos: map[string]graph.Pos{}, all: map[string][]graph.Pos{}}
	for _, f := range files {
		file := f.Filename
		if rel, err := filepath.Rel(dir, file); err == nil {
			file = rel
		}
		file = filepath.ToSlash(file)
		if strings.HasPrefix(file, "../") || strings.HasPrefix(file, "cue.mod/") {
			continue
		}
		ix.decls(file, "", f.Decls)
	}
	return ix
}

func (ix *posIndex) decls(file, prefix string, decls []ast.Decl) {
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.Field:
			name, ok := labelName(d.Label)
			if !ok {
				continue
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			ix.add(file, p, d.Label.Pos())
			ix.expr(file, p, d.Value)
		case *ast.EmbedDecl:
			if prefix == "" {
				// The contract root (schema.#Contract & {...}): where
				// errors of the root itself, such as a missing name, go.
				ix.add(file, "", d.Expr.Pos())
			}
			ix.expr(file, prefix, d.Expr)
		case *ast.Comprehension:
			ix.expr(file, prefix, d.Value)
		}
	}
}

func (ix *posIndex) expr(file, prefix string, e ast.Expr) {
	switch e := e.(type) {
	case *ast.StructLit:
		ix.decls(file, prefix, e.Elts)
	case *ast.BinaryExpr:
		if e.Op == token.AND || e.Op == token.OR {
			ix.expr(file, prefix, e.X)
			ix.expr(file, prefix, e.Y)
		}
	case *ast.ParenExpr:
		ix.expr(file, prefix, e.X)
	case *ast.ListLit:
		for i, el := range e.Elts {
			p := prefix + "." + itoa(i)
			if _, ok := el.(*ast.Ellipsis); ok {
				continue
			}
			ix.add(file, p, el.Pos())
			ix.expr(file, p, el)
		}
	}
}

func (ix *posIndex) add(file, p string, pos token.Pos) {
	if !pos.IsValid() {
		return
	}
	pp := pos.Position()
	np := graph.Pos{File: file, Line: pp.Line, Col: pp.Column}
	all := ix.all[p]
	i, found := slices.BinarySearchFunc(all, np, comparePos)
	if !found {
		ix.all[p] = slices.Insert(all, i, np)
	}
	if old, ok := ix.pos[p]; ok && !posLess(np, old) {
		return
	}
	ix.pos[p] = np
}

// comparePos orders positions by file, line and column.
func comparePos(a, b graph.Pos) int {
	switch {
	case posLess(a, b):
		return -1
	case posLess(b, a):
		return 1
	}
	return 0
}

// lookup returns the position of path, else of its nearest indexed parent.
func (ix *posIndex) lookup(p string) graph.Pos {
	for {
		if pos, ok := ix.pos[p]; ok {
			return pos
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			if pos, ok := ix.pos[""]; ok && p != "" {
				return pos
			}
			break
		}
		p = p[:i]
	}
	// Fall back to the first position recorded at all.
	var best graph.Pos
	for _, pos := range ix.pos {
		if !best.IsValid() || posLess(pos, best) {
			best = pos
		}
	}
	return best
}

// has reports whether path itself (not a parent) is indexed.
func (ix *posIndex) has(p string) bool { _, ok := ix.pos[p]; return ok }

func posLess(a, b graph.Pos) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

// labelName returns the selector text of a field label.
func labelName(l ast.Label) (string, bool) {
	switch l := l.(type) {
	case *ast.Ident:
		return l.Name, true
	case *ast.BasicLit:
		if l.Kind != token.STRING {
			return l.Value, true
		}
		s, err := literal.Unquote(l.Value)
		if err != nil {
			return "", false
		}
		return s, true
	case *ast.Alias:
		if inner, ok := l.Expr.(ast.Label); ok {
			return labelName(inner)
		}
	}
	return "", false
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
