package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// The Go files of a branch are the course's files with a few precise
// edits. go/parser finds what to change; the edits replace those bytes of
// the source and leave every other byte (comments included) as it was;
// gofmt then sorts the imports. A rule that finds nothing to change where
// it must is an error, so that the generator fails instead of drifting
// when the course's code changes shape.

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// splice applies edits to src and gofmts the result.
func splice(src []byte, edits []edit) ([]byte, error) {
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		if e.start < at {
			return nil, fmt.Errorf("overlapping edits at byte %d", e.start)
		}
		out.Write(src[at:e.start])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(src[at:])
	formatted, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the edited file does not parse: %w\n%s", err, out.Bytes())
	}
	return formatted, nil
}

// span is the byte range of node n, from its doc comment (if any) on.
func span(fset *token.FileSet, n ast.Node) (int, int) {
	start := n.Pos()
	if d, ok := n.(*ast.FuncDecl); ok && d.Doc != nil {
		start = d.Doc.Pos()
	}
	return fset.Position(start).Offset, fset.Position(n.End()).Offset
}

// renamePackage renames the package of a Go file to name (name_test for
// an external test package), and "Package old" at the start of its doc
// comment with it.
func renamePackage(src []byte, name string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	old := f.Name.Name
	if strings.HasSuffix(old, "_test") {
		name += "_test"
	}
	if old == name {
		return src, nil
	}
	start, end := span(fset, f.Name)
	edits := []edit{{start, end, name}}
	if f.Doc != nil {
		for _, c := range f.Doc.List {
			at := fset.Position(c.Pos()).Offset
			if prefix := "// Package " + old; strings.HasPrefix(c.Text, prefix) {
				at += len("// Package ")
				edits = append(edits, edit{at, at + len(old), name})
			}
		}
	}
	return splice(src, edits)
}

// rewriteImports replaces every import path p with newPath(p).
func rewriteImports(src []byte, newPath func(string) (string, error)) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var edits []edit
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return nil, err
		}
		np, err := newPath(p)
		if err != nil {
			return nil, err
		}
		if np != p {
			start, end := span(fset, imp.Path)
			edits = append(edits, edit{start, end, strconv.Quote(np)})
		}
	}
	if len(edits) == 0 {
		return src, nil
	}
	return splice(src, edits)
}
