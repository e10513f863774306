package main

import (
	"bytes"
	"fmt"
	"html"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// doc is one Markdown file of the repository as the book renders it: where
// it is (its links are relative to it) and the page it lands on.
type doc struct {
	src  string // its path in the repository, e.g. chapters/05-rebuild-pods/README.md
	page string // the book page it is rendered into, e.g. en/chapters/05-rebuild-pods.html
}

// rendered is a Markdown file rendered: its HTML, its first heading and
// its text, for the search.
type rendered struct {
	html, title, text string
}

// render renders d's Markdown into HTML for the page d.page: its links
// point at the book's pages (or its source views) relative to that page,
// its headings have GitHub's anchors (the READMEs link to them), a Mermaid
// block is the diagram make check-diagrams rendered from it, and a block
// quoted from a file (quote=PATH) names the file and lines it comes from.
//
// ids gives the headings their anchors: one for each page, so that two
// documents on one page (a chapter and its exercise) do not share one.
func (b *book) render(d doc, src []byte, ids *gitHubIDs) (rendered, error) {
	r := &docRenderer{book: b, doc: d}
	md := goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithParserOptions(
			parser.WithAutoHeadingID(),
			parser.WithASTTransformers(util.Prioritized(r, 100)),
		),
		goldmark.WithRendererOptions(
			gmhtml.WithUnsafe(), // the READMEs' own HTML (<details>, <br>)
			renderer.WithNodeRenderers(util.Prioritized(r, 100)),
		),
	)
	ctx := parser.NewContext(parser.WithIDs(ids))
	var buf bytes.Buffer
	if err := md.Convert(src, &buf, parser.WithContext(ctx)); err != nil {
		return rendered{}, fmt.Errorf("%s: %w", d.src, err)
	}
	if r.err != nil {
		return rendered{}, r.err
	}
	return rendered{html: buf.String(), title: r.title, text: r.text.String()}, nil
}

// docRenderer rewrites one document's links as it is parsed, and renders
// its code blocks.
type docRenderer struct {
	book     *book
	doc      doc
	title    string
	text     strings.Builder
	mermaids int
	err      error
}

// Transform rewrites the links of the document and notes its title and
// text.
func (r *docRenderer) Transform(node *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	_ = ast.Walk(node, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			if r.title == "" && n.Level == 1 {
				r.title = plainText(n, src)
			}
		case *ast.Link:
			n.Destination = []byte(r.book.link(r.doc, string(n.Destination)))
		case *ast.Image:
			n.Destination = []byte(r.book.link(r.doc, string(n.Destination)))
		case *ast.Text:
			r.text.Write(n.Segment.Value(src))
			if n.SoftLineBreak() || n.HardLineBreak() {
				r.text.WriteByte(' ')
			}
		case *ast.FencedCodeBlock:
			if lang := string(n.Language(src)); lang != "mermaid" {
				r.text.WriteByte(' ')
				r.text.Write(n.Lines().Value(src))
			}
		}
		return ast.WalkContinue, nil
	})
}

// RegisterFuncs renders fenced code blocks.
func (r *docRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, r.codeBlock)
}

func (r *docRenderer) codeBlock(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.FencedCodeBlock)
	var info string
	if n.Info != nil {
		info = string(n.Info.Segment.Value(src))
	}
	fields := strings.Fields(info)
	lang := ""
	if len(fields) > 0 {
		lang = fields[0]
	}
	body := string(n.Lines().Value(src))
	if lang == "mermaid" {
		r.mermaids++
		svg, err := r.book.diagram(r.doc.src, r.mermaids)
		if err != nil {
			r.err = err
			return ast.WalkSkipChildren, nil
		}
		fmt.Fprintf(w, "<figure class=\"diagram\">%s</figure>\n", svg)
		return ast.WalkSkipChildren, nil
	}
	var quoted string
	for _, f := range fields[min(1, len(fields)):] {
		if q, ok := strings.CutPrefix(f, "quote="); ok {
			quoted = q
		}
	}
	if quoted != "" {
		first, last, err := r.book.locate(quoted, body)
		if err != nil {
			r.err = fmt.Errorf("%s: %w", r.doc.src, err)
			return ast.WalkSkipChildren, nil
		}
		r.book.sources[quoted] = true
		href := r.book.relative(r.doc.page, r.book.sourcePage(quoted)) + fmt.Sprintf("#L%d", first)
		link := fmt.Sprintf("<a href=\"%s\">%s</a>", html.EscapeString(href), html.EscapeString(quoted))
		fmt.Fprintf(w, "<figure class=\"quote\"><figcaption>%s</figcaption>\n", fmt.Sprintf(r.book.word(r.doc, "quote-lines"), link, first, last))
	}
	class := ""
	if lang != "" {
		class = fmt.Sprintf(" class=\"language-%s\"", html.EscapeString(lang))
	}
	fmt.Fprintf(w, "<pre><code%s>%s</code></pre>\n", class, html.EscapeString(body))
	if quoted != "" {
		fmt.Fprintln(w, "</figure>")
	}
	return ast.WalkSkipChildren, nil
}

// plainText is a node's text without its markup.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch c := c.(type) {
			case *ast.Text:
				b.Write(c.Segment.Value(src))
			case *ast.String:
				b.Write(c.Value)
			}
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// gitHubIDs gives headings the anchors GitHub gives them, which the
// READMEs' links use: lower case, punctuation dropped (letters of any
// script stay), spaces turned into hyphens, and -1, -2 after a repeat.
type gitHubIDs struct{ seen map[string]int }

func newGitHubIDs() *gitHubIDs { return &gitHubIDs{seen: map[string]int{}} }

// Generate makes the anchor of a heading from its Markdown source.
func (g *gitHubIDs) Generate(value []byte, _ ast.NodeKind) []byte {
	id := slug(string(value))
	n, seen := g.seen[id]
	g.seen[id] = n + 1
	if seen {
		id = fmt.Sprintf("%s-%d", id, n)
	}
	return []byte(id)
}

// Put records an anchor written out in the Markdown.
func (g *gitHubIDs) Put(value []byte) { g.seen[string(value)]++ }

// markdownLink is a link's text in Markdown source: [text](url).
var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// slug is GitHub's anchor of a heading's text.
func slug(s string) string {
	s = markdownLink.ReplaceAllString(s, "$1")
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c == ' ':
			b.WriteByte('-')
		case c == '-' || c == '_' || unicode.IsLetter(c) || unicode.IsNumber(c) || unicode.Is(unicode.Mn, c):
			b.WriteRune(c)
		}
	}
	return b.String()
}

// locate finds the lines of file that a quoted block holds, as the docs
// test checks them (tests/docs): its lines that are not blank or comments,
// in order; a translated block's comments differ from the file's. It
// returns the first and the last line's numbers.
func (b *book) locate(file, block string) (first, last int, err error) {
	data, err := os.ReadFile(b.repoPath(file))
	if err != nil {
		return 0, 0, err
	}
	type line struct {
		n    int
		text string
	}
	code := func(s string) []line {
		var ls []line
		for i, l := range strings.Split(s, "\n") {
			t := strings.TrimSpace(l)
			// A diff's lines keep their sign: the comment after it is code.
			if t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") {
				continue
			}
			ls = append(ls, line{i + 1, t})
		}
		return ls
	}
	fileLines, blockLines := code(string(data)), code(block)
	if len(blockLines) == 0 {
		return 0, 0, fmt.Errorf("the block quoted from %s has no code", file)
	}
outer:
	for i := 0; i+len(blockLines) <= len(fileLines); i++ {
		for j, bl := range blockLines {
			if fileLines[i+j].text != bl.text && !strings.HasPrefix(fileLines[i+j].text, strings.Split(bl.text, "//")[0]) {
				continue outer
			}
		}
		return fileLines[i].n, fileLines[i+len(blockLines)-1].n, nil
	}
	return 0, 0, fmt.Errorf("the block quoted from %s is not in it", file)
}

// link rewrites a link of document d for its page: a link to another
// document of the book goes to its page, one to a file or directory of
// the repository to its source view, anything else (another site, an
// anchor of the same page) stays as it is.
func (b *book) link(d doc, dest string) string {
	u, err := url.Parse(dest)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Path == "" {
		return dest
	}
	target := path.Clean(path.Join(path.Dir(d.src), u.Path))
	if strings.HasPrefix(target, "../") {
		return dest // outside the repository: left as written
	}
	page, anchor := b.pageOf(target)
	if page == "" {
		return dest
	}
	out := b.relative(d.page, page)
	switch {
	case u.Fragment != "":
		out += "#" + u.Fragment
	case anchor != "":
		out += "#" + anchor
	}
	return out
}

// relative is the URL of page to, relative to page from (both paths
// under the book's root).
func (b *book) relative(from, to string) string {
	rel, err := filepath.Rel(filepath.FromSlash(path.Dir(from)), filepath.FromSlash(to))
	if err != nil {
		panic(err) // two relative paths always have a relative path between them
	}
	rel = filepath.ToSlash(rel)
	if strings.HasSuffix(to, "/") || to == "" {
		rel += "/"
	}
	return rel
}
