package compile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"

	"stitchkit.dev/stitchkit/pkg/graph"
)

// schemaCache returns the digests of the schemas generated so far in this
// compilation, keyed by [compiler.schemaParts].
func (c *compiler) schemaCache() map[string]graph.Digest {
	if c.schemas == nil {
		c.schemas = map[string]graph.Digest{}
	}
	return c.schemas
}

// schemaParts takes apart the expression (op, args) of a schema node's
// value. A schema node is the field the user wrote unified with the
// contract language's placeholder (`#input?: _`, `#args!: [...]`), once or
// twice (a bare embedded schema.#Contract is unified with the definition
// again to close it). When that is so, schemaParts returns the user's
// conjunct, and a cache key when the user's field is self-contained (see
// fieldKey).
//
// The key is the user's field as written (label, doc comments, value,
// comments inside it), its file (import names and file-level lets are per
// file) and the placeholder fields. Two nodes with the same key have the
// same value, the same doc comments and references to the same package-level
// declarations, so encoding/jsonschema.Generate and the representability
// walk see the same thing and the normalised schema is the same: generating
// it once per compilation is enough.
func (c *compiler) schemaParts(op cue.Op, args []cue.Value) (user cue.Value, key string) {
	if op != cue.AndOp || len(args) < 2 {
		return cue.Value{}, ""
	}
	var uf *ast.Field
	kind := cue.TopKind
	var pfs []*ast.Field
	for _, a := range args {
		f, ok := a.Source().(*ast.Field)
		if !ok {
			return cue.Value{}, ""
		}
		k := placeholder(f.Value)
		if k == 0 {
			if uf != nil {
				return cue.Value{}, ""
			}
			user, uf = a, f
			continue
		}
		// Dropping a placeholder drops its doc comments: only the
		// contract language's own (which normalisation strips anyway).
		for _, cg := range ast.Comments(f) {
			if !c.schemaDocs[strings.TrimSpace(cg.Text())] {
				return cue.Value{}, ""
			}
		}
		kind &= k
		pfs = append(pfs, f)
	}
	if uf == nil {
		return cue.Value{}, ""
	}
	if kind != cue.TopKind && user.IncompleteKind() != kind {
		// The placeholder narrows the kind (#args: [...]); dropping it
		// is neutral only when the user's value already has that kind.
		return cue.Value{}, ""
	}
	uk, ok := fieldKey(uf)
	if !ok {
		return user, ""
	}
	keys := []string{uf.Pos().Filename() + "\x00" + uk}
	for _, pf := range pfs {
		pk, ok := fieldKey(pf)
		if !ok {
			return user, ""
		}
		keys = append(keys, pf.Pos().Filename()+"\x00"+pk)
	}
	slices.Sort(keys[1:])
	return user, strings.Join(keys, "\x00\x00")
}

// placeholder reports the kind a contract-language placeholder allows: top
// for `_`, list for `[...]`; 0 when e is not a placeholder.
func placeholder(e ast.Expr) cue.Kind {
	switch e := e.(type) {
	case *ast.Ident:
		if e.Name == "_" {
			return cue.TopKind
		}
	case *ast.ListLit:
		if len(e.Elts) == 1 {
			if el, ok := e.Elts[0].(*ast.Ellipsis); ok && el.Type == nil {
				return cue.ListKind
			}
		}
	}
	return 0
}

// fieldKey serialises field f — label, constraint marker, value, attributes
// and every comment attached inside it — so that two fields have the same
// key exactly when they are written the same up to layout. It reports false
// when f is not self-contained: an identifier in it resolves to an
// enclosing struct, alias, let or comprehension of the file rather than to
// something inside f, a file-level declaration (definitions, fields, lets,
// imports of the file) or nothing the parser could see (predeclared
// identifiers, declarations of the package's other files); the same text
// can then mean different things at different places. It also reports
// false on syntax it does not serialise unambiguously.
func fieldKey(f *ast.Field) (string, bool) {
	var b strings.Builder
	var seen []ast.Node // the nodes walked so far: scopes precede their uses
	ok := true
	str := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	ast.Walk(f, func(n ast.Node) bool {
		if !ok {
			return false
		}
		b.WriteByte('(')
		switch n := n.(type) {
		case *ast.Comment:
			b.WriteByte('c')
			str(n.Text)
		case *ast.CommentGroup:
			fmt.Fprintf(&b, "g%t%t%d", n.Doc, n.Line, n.Position)
		case *ast.Attribute:
			b.WriteByte('@')
			str(n.Text)
		case *ast.Field:
			b.WriteByte('F')
			str(n.Constraint.String())
		case *ast.Ident:
			b.WriteByte('i')
			str(n.Name)
			if n.Scope != nil {
				if _, file := n.Scope.(*ast.File); !file && !slices.Contains(seen, n.Scope) {
					ok = false
				}
			}
		case *ast.BasicLit:
			b.WriteByte('l')
			str(n.Kind.String())
			str(n.Value)
		case *ast.UnaryExpr:
			b.WriteByte('u')
			str(n.Op.String())
		case *ast.BinaryExpr:
			b.WriteByte('b')
			str(n.Op.String())
		case *ast.PostfixExpr:
			b.WriteByte('p')
			str(n.Op.String())
		case *ast.Func:
			b.WriteByte('f')
		case *ast.StructLit:
			b.WriteByte('s')
		case *ast.ListLit:
			b.WriteByte('L')
		case *ast.Ellipsis:
			b.WriteByte('e')
		case *ast.BottomLit:
			b.WriteByte('_')
		case *ast.Interpolation:
			b.WriteByte('I')
		case *ast.ParenExpr:
			b.WriteByte('P')
		case *ast.SelectorExpr:
			b.WriteByte('.')
		case *ast.IndexExpr:
			b.WriteByte('[')
		case *ast.CallExpr:
			b.WriteByte('C')
		case *ast.EmbedDecl:
			b.WriteByte('E')
		case *ast.LetClause:
			b.WriteByte('=')
		case *ast.Alias:
			b.WriteByte('A')
		case *ast.Comprehension:
			b.WriteByte('{')
		case *ast.ForClause:
			b.WriteByte('4')
		case *ast.IfClause:
			b.WriteByte('?')
		case *ast.FallbackClause:
			b.WriteByte('|')
		case *ast.TryClause:
			b.WriteByte('t')
		default:
			// SliceExpr and PostfixAlias have optional children of the
			// same kind side by side; anything else is not expected in a
			// field.
			ok = false
			return false
		}
		seen = append(seen, n)
		return true
	}, func(ast.Node) {
		b.WriteByte(')')
	})
	return b.String(), ok
}
