// Package docs reads the course's READMEs: their sections, code blocks,
// commands and links (to keep the English and Chinese versions in step),
// and the console sessions of their "Try it" sections (to run them).
// Markdown is parsed by goldmark, the CommonMark parser Hugo uses.
package docs

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Doc is what the checks need from one README.
type Doc struct {
	Sections []Section
	Blocks   []CodeBlock
	// Spans are the inline code spans, in order: commands, flags, names.
	Spans []string
	// Links are the destinations of links, images and autolinks, in order.
	Links []string
}

// Section is a heading.
type Section struct {
	Level int
	Title string
}

// CodeBlock is a fenced code block and the section it is in.
type CodeBlock struct {
	Lang string
	// Info is the whole info string after the fence, e.g. "console kind".
	Info    string
	Text    string
	Section int // index into Doc.Sections, -1 before the first heading
}

// Parse reads a README.
func Parse(src []byte) *Doc {
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	root := md.Parser().Parse(text.NewReader(src))
	d := &Doc{}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			d.Sections = append(d.Sections, Section{Level: n.Level, Title: plain(n, src)})
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock:
			var b strings.Builder
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				b.Write(seg.Value(src))
			}
			info := ""
			if n.Info != nil {
				info = string(n.Info.Segment.Value(src))
			}
			d.Blocks = append(d.Blocks, CodeBlock{Lang: string(n.Language(src)), Info: info, Text: b.String(), Section: len(d.Sections) - 1})
		case *ast.CodeSpan:
			// A span may break across lines; it renders with a space there.
			d.Spans = append(d.Spans, strings.Join(strings.Fields(plain(n, src)), " "))
			return ast.WalkSkipChildren, nil
		case *ast.Link:
			d.Links = append(d.Links, string(n.Destination))
		case *ast.Image:
			d.Links = append(d.Links, string(n.Destination))
		case *ast.AutoLink:
			d.Links = append(d.Links, string(n.URL(src)))
		}
		return ast.WalkContinue, nil
	})
	return d
}

// plain is a node's text without markup.
func plain(n ast.Node, src []byte) string {
	var b bytes.Buffer
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			if t, ok := c.(*ast.Text); ok {
				b.Write(t.Segment.Value(src))
				if t.SoftLineBreak() {
					b.WriteByte(' ')
				}
			}
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// SectionBlocks returns the code blocks in the section titled title and its
// subsections.
func (d *Doc) SectionBlocks(title string) ([]CodeBlock, error) {
	start := -1
	for i, s := range d.Sections {
		if s.Title == title {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("no section %q", title)
	}
	end := len(d.Sections)
	for i := start + 1; i < len(d.Sections); i++ {
		if d.Sections[i].Level <= d.Sections[start].Level {
			end = i
			break
		}
	}
	var blocks []CodeBlock
	for _, b := range d.Blocks {
		if b.Section >= start && b.Section < end {
			blocks = append(blocks, b)
		}
	}
	return blocks, nil
}
