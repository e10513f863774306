// Command book builds the course as a static web book, in English and in
// Chinese, from the same texts the repository holds (no second copy of
// any): the READMEs, TESTING, the glossary, each chapter's exercise, its
// mutants and its diff, which it takes from make diff-chapter; and the
// diagrams make check-diagrams rendered. `make book` runs it; the pages
// link to each other relatively, so the book opens from any address or
// from the disk, and nothing is fetched from outside it.
//
// The book's layout, under --out:
//
//	index.html              a choice of language
//	en/index.html           README.md; zh/index.html: README.zh-CN.md
//	en/testing.html         TESTING.md, and its twin
//	zh/glossary.html        GLOSSARY.zh-CN.md
//	en/chapters/NN-slug.html  the chapter: its README, its diff, its
//	                        exercise (hints folded) and its mutants
//	src/PATH.html           a file of the repository that a page links
//	                        to or quotes, its lines numbered (#L12)
//	en/search-index.js      every page's text, for the search box
//	assets/                 the style and the script
//	pages.json              every page, for the browser check
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"example.com/redis-operator/chapters"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	b := &book{sources: map[string]bool{}, diffs: map[int]string{}}
	flag.StringVar(&b.root, "root", ".", "the repository")
	flag.StringVar(&b.out, "out", "_output/book", "where the book goes (emptied first)")
	flag.StringVar(&b.diagrams, "diagrams", "_output/diagrams", "the diagrams make check-diagrams rendered")
	serve := flag.String("serve", "", "then serve the book at this address (localhost:8000) until interrupted")
	flag.Parse()
	start := time.Now()
	if err := os.RemoveAll(b.out); err != nil {
		return err
	}
	if err := b.build(); err != nil {
		return err
	}
	fmt.Printf("The book: %d pages in %s, both languages, and %d source views, in %.1fs\n",
		len(b.pages), b.out, len(b.sources), time.Since(start).Seconds())
	if *serve == "" {
		fmt.Println("make serve-book serves it; or open index.html there")
		return nil
	}
	l, err := net.Listen("tcp", *serve)
	if err != nil {
		return err
	}
	fmt.Printf("Serving it at http://%s/ (Ctrl-C stops)\n", l.Addr())
	return http.Serve(l, http.FileServer(http.Dir(b.out)))
}

// book is the book being built.
type book struct {
	root, out, diagrams string
	// pages are the pages written, by language and path.
	pages []pageInfo
	// sources are the repository's files and directories that a page
	// links to or quotes: each gets a source view.
	sources map[string]bool
	// extra are the other Markdown files that a page links to, each
	// rendered as a page of its own.
	extra []string
	// diffs are the chapters' diffs as tables, by chapter, made once for
	// both languages.
	diffs map[int]string
}

// pageInfo is a page as pages.json and the search index list it.
type pageInfo struct {
	Lang  string `json:"lang"`
	Path  string `json:"path"`
	Title string `json:"title"`
	// Chapter is the chapter's number, on a chapter's page.
	Chapter int    `json:"chapter,omitempty"`
	text    string // for the search
	// twin, if set, is the page in the other language, where it is not
	// the same path under the other language's directory.
	twin string
}

// langs are the book's two languages: the directory of their pages and
// the suffix of their Markdown files.
var langs = []struct{ dir, suffix, html string }{
	{"en", ".md", "en"},
	{"zh", ".zh-CN.md", "zh-CN"},
}

// build writes every page, then the source views, the search indexes,
// the assets and pages.json.
func (b *book) build() error {
	for _, l := range langs {
		top := []struct{ src, page string }{
			{"README" + l.suffix, l.dir + "/index.html"},
			{"TESTING" + l.suffix, l.dir + "/testing.html"},
		}
		if l.dir == "zh" {
			top = append(top, struct{ src, page string }{"GLOSSARY.zh-CN.md", "zh/glossary.html"})
		}
		for _, t := range top {
			if err := b.docPage(l.dir, t.src, t.page); err != nil {
				return err
			}
		}
		for _, c := range chapters.All {
			if err := b.chapterPage(l.dir, c); err != nil {
				return err
			}
		}
	}
	for i := 0; i < len(b.extra); i++ { // a page may link to more
		p := b.extra[i]
		lang := "en"
		if strings.HasSuffix(p, ".zh-CN.md") {
			lang = "zh"
		}
		page, _ := b.pageOf(p)
		if err := b.docPage(lang, p, page); err != nil {
			return err
		}
	}
	if err := b.sourceViews(); err != nil {
		return err
	}
	if err := b.searchIndexes(); err != nil {
		return err
	}
	if err := b.assets(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(b.pages, "", "  ")
	if err != nil {
		return err
	}
	return b.write("pages.json", string(data))
}

// pageOf is the book page of a repository path, and where on it that
// path's text starts; "" for a path the book has no page or view of.
func (b *book) pageOf(p string) (page, anchor string) {
	lang, base := "en", strings.TrimSuffix(p, ".md")
	if strings.HasSuffix(p, ".zh-CN.md") {
		lang, base = "zh", strings.TrimSuffix(p, ".zh-CN.md")
	}
	if strings.HasSuffix(p, ".md") {
		switch {
		case base == "README":
			return lang + "/index.html", ""
		case base == "TESTING":
			return lang + "/testing.html", ""
		case base == "GLOSSARY" && lang == "zh":
			return "zh/glossary.html", ""
		}
		dir, name := path.Split(base)
		dir = strings.TrimSuffix(dir, "/")
		if c, ok := chapterOfDir(dir); ok && name == "README" {
			return fmt.Sprintf("%s/chapters/%s.html", lang, c.Name()), ""
		}
		if c, ok := chapterOfDir(strings.TrimSuffix(dir, "/exercise")); ok && strings.HasSuffix(dir, "/exercise") {
			return fmt.Sprintf("%s/chapters/%s.html", lang, c.Name()), sectionOf(name)
		}
		// Another text of the repository (the benchmark's README): a page
		// of its own, rendered after the others.
		if _, err := os.Stat(b.repoPath(p)); err == nil {
			page := lang + "/docs/" + base + ".html"
			if !slices.Contains(b.extra, p) {
				b.extra = append(b.extra, p)
			}
			return page, ""
		}
	}
	if _, err := os.Stat(b.repoPath(p)); err != nil {
		return "", ""
	}
	b.sources[p] = true
	return b.sourcePage(p), ""
}

// sectionOf is the anchor of the section of a chapter's page that shows
// an exercise's file.
func sectionOf(name string) string {
	if strings.HasPrefix(name, "SPEC") {
		return "spec-exercise"
	}
	return "exercise"
}

// chapterOfDir is the chapter whose directory is dir.
func chapterOfDir(dir string) (chapters.Chapter, bool) {
	for _, c := range chapters.All {
		if c.Dir() == dir {
			return c, true
		}
	}
	return chapters.Chapter{}, false
}

// sourcePage is the source view of a repository path: a file's lines, a
// directory's files.
func (b *book) sourcePage(p string) string {
	if fi, err := os.Stat(b.repoPath(p)); err == nil && fi.IsDir() {
		return path.Join("src", p, "index.html")
	}
	return "src/" + p + ".html"
}

func (b *book) repoPath(p string) string { return filepath.Join(b.root, filepath.FromSlash(p)) }

// docPage writes the page of one Markdown file.
func (b *book) docPage(lang, src, page string) error {
	data, err := os.ReadFile(b.repoPath(src))
	if err != nil {
		return err
	}
	r, err := b.render(doc{src: src, page: page}, data, newGitHubIDs())
	if err != nil {
		return err
	}
	info := pageInfo{Lang: lang, Path: page, Title: r.title, text: r.text}
	// A text with no twin (the glossary, a README of a tool in English
	// alone): the switch leads to the other language's start.
	twinSrc := strings.TrimSuffix(src, ".zh-CN.md") + ".md"
	if lang == "en" {
		twinSrc = strings.TrimSuffix(src, ".md") + ".zh-CN.md"
	}
	if _, err := os.Stat(b.repoPath(twinSrc)); err != nil {
		info.twin = map[string]string{"en": "zh", "zh": "en"}[lang] + "/index.html"
	} else if twinPage, _ := b.pageOf(twinSrc); twinPage != "" {
		info.twin = twinPage
	}
	return b.writePage(info, r.html)
}

// chapterPage writes a chapter's page: its README, then what the book
// adds from the same sources: the diff, the exercise, the mutants.
func (b *book) chapterPage(lang string, c chapters.Chapter) error {
	suffix := ".md"
	if lang == "zh" {
		suffix = ".zh-CN.md"
	}
	page := fmt.Sprintf("%s/chapters/%s.html", lang, c.Name())
	ids := newGitHubIDs()
	src := c.Dir() + "/README" + suffix
	data, err := os.ReadFile(b.repoPath(src))
	if err != nil {
		return err
	}
	readme, err := b.render(doc{src: src, page: page}, data, ids)
	if err != nil {
		return err
	}
	var body strings.Builder
	body.WriteString(readme.html)
	text := readme.text
	d := doc{page: page}

	diff, err := b.diffSection(d, c)
	if err != nil {
		return err
	}
	body.WriteString(diff)

	for _, ex := range []struct{ id, task, hints string }{
		{"exercise", "TASK", "HINTS"},
		{"spec-exercise", "SPEC", "SPEC-HINTS"},
	} {
		taskSrc := c.Dir() + "/exercise/" + ex.task + suffix
		task, err := os.ReadFile(b.repoPath(taskSrc))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(&body, "<section class=\"exercise\" id=\"%s\">\n", ex.id)
		r, err := b.render(doc{src: taskSrc, page: page}, task, ids)
		if err != nil {
			return err
		}
		body.WriteString(r.html)
		text += " " + r.text
		hintsSrc := c.Dir() + "/exercise/" + ex.hints + suffix
		if hints, err := os.ReadFile(b.repoPath(hintsSrc)); err == nil {
			folded, err := b.foldedHints(doc{src: hintsSrc, page: page}, hints, ids)
			if err != nil {
				return err
			}
			body.WriteString(folded)
		}
		body.WriteString("</section>\n")
	}

	mutants, err := b.mutantsSection(d, c)
	if err != nil {
		return err
	}
	body.WriteString(mutants)
	return b.writePage(pageInfo{Lang: lang, Path: page, Title: readme.title, Chapter: c.Number, text: text}, body.String())
}

// foldedHints renders a hints file with each hint (a section under a
// second-level heading) folded, to be opened one at a time, as make hint
// gives them.
func (b *book) foldedHints(d doc, src []byte, ids *gitHubIDs) (string, error) {
	parts := strings.Split("\n"+string(src), "\n## ")
	var out strings.Builder
	fmt.Fprintf(&out, "<h2>%s</h2>\n", html.EscapeString(b.word(d, "Hints")))
	for _, part := range parts[1:] {
		title, body, _ := strings.Cut(part, "\n")
		r, err := b.render(d, []byte(body), ids)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&out, "<details class=\"hint\"><summary>%s</summary>\n%s</details>\n", html.EscapeString(strings.TrimSpace(title)), r.html)
	}
	return out.String(), nil
}

// mutantsSection lists the chapter's mutants: what each breaks, the spec
// that catches it and where, and its patch, folded.
func (b *book) mutantsSection(d doc, c chapters.Chapter) (string, error) {
	ms, err := chapters.ReadMutants(b.repoPath(c.Dir()), c.Number, "")
	if err != nil || len(ms) == 0 {
		return "", err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "<section class=\"mutants\" id=\"mutants\">\n<h2>%s</h2>\n<p>%s</p>\n", b.word(d, "Mutants"), b.word(d, "mutants-intro"))
	for _, m := range ms {
		fmt.Fprintf(&out, "<details class=\"mutant\" id=\"mutant-%s\"><summary><code>%s</code>: %s</summary>\n<p>%s %s</p>\n<p>%s <em>%s</em>, %s <em>%s</em></p>\n<pre><code class=\"language-diff\">%s</code></pre>\n</details>\n",
			m.Name, m.Name, html.EscapeString(m.Bug), b.word(d, "Why:"), html.EscapeString(m.Why),
			b.word(d, "Caught by"), html.EscapeString(m.Spec), b.word(d, "in step"), html.EscapeString(m.Step), html.EscapeString(m.Diff))
	}
	out.WriteString("</section>\n")
	return out.String(), nil
}

// diffSection is the chapter's diff against the chapter it builds on,
// side by side, file by file, from make diff-chapter.
func (b *book) diffSection(d doc, c chapters.Chapter) (string, error) {
	var out strings.Builder
	fmt.Fprintf(&out, "<section class=\"diff\" id=\"diff\">\n<h2>%s</h2>\n", b.word(d, "The diff"))
	if c.Base() == 0 {
		fmt.Fprintf(&out, "<p>%s <a href=\"%s\">%s</a></p>\n</section>\n", b.word(d, "first-chapter"),
			html.EscapeString(b.relative(d.page, b.sourcePage(c.Dir()))), c.Dir())
		b.sources[c.Dir()] = true
		return out.String(), nil
	}
	// Both languages show the same tables: made once for the first.
	tables, ok := b.diffs[c.Number]
	if !ok {
		cmd := exec.Command("make", "--no-print-directory", "-s", "diff-chapter", fmt.Sprintf("CHAPTER=%d", c.Number))
		cmd.Dir = b.root
		cmd.Stderr = os.Stderr
		unified, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("make diff-chapter %d: %w", c.Number, err)
		}
		var t strings.Builder
		for _, f := range parseDiff(string(unified)) {
			t.WriteString(f.sideBySide())
		}
		tables = t.String()
		b.diffs[c.Number] = tables
	}
	base, _ := chapters.Get(c.Base())
	fmt.Fprintf(&out, "<p>%s</p>\n", fmt.Sprintf(b.word(d, "diff-intro"), c.Number, base.Number, c.Number))
	out.WriteString(tables)
	out.WriteString("</section>\n")
	return out.String(), nil
}

// writePage writes a page in the book's layout and lists it.
func (b *book) writePage(info pageInfo, body string) error {
	lang := langs[0]
	other := langs[1]
	if info.Lang == "zh" {
		lang, other = langs[1], langs[0]
	}
	rel := func(to string) string { return html.EscapeString(b.relative(info.Path, to)) }
	twin := other.dir + strings.TrimPrefix(info.Path, lang.dir)
	if info.twin != "" {
		twin = info.twin
	}
	var nav strings.Builder
	fmt.Fprintf(&nav, "<li><a href=\"%s\">%s</a></li>\n", rel(lang.dir+"/index.html"), b.word(doc{page: info.Path}, "Start"))
	for _, c := range chapters.All {
		p := fmt.Sprintf("%s/chapters/%s.html", lang.dir, c.Name())
		current := ""
		if p == info.Path {
			current = " aria-current=\"page\""
		}
		fmt.Fprintf(&nav, "<li><a href=\"%s\"%s>%s</a></li>\n", rel(p), current, html.EscapeString(b.chapterTitle(lang.dir, c)))
	}
	fmt.Fprintf(&nav, "<li><a href=\"%s\">%s</a></li>\n", rel(lang.dir+"/testing.html"), b.word(doc{page: info.Path}, "Testing"))
	if lang.dir == "zh" {
		fmt.Fprintf(&nav, "<li><a href=\"%s\">术语表</a></li>\n", rel("zh/glossary.html"))
	}
	switchLabel := map[string]string{"en": "中文", "zh": "English"}[lang.dir]
	page := head(lang.html, info.Title, rel("assets/book.css")) + fmt.Sprintf(`<body data-lang="%s" data-root="%s">
<header class="top">
<a class="home" href="%s">Redis operator</a>
<input id="search" type="search" placeholder="%s" aria-label="%s" autocomplete="off">
<a id="lang-switch" href="%s" hreflang="%s">%s</a>
</header>
<div id="results" hidden></div>
<div class="layout">
<nav class="chapters"><ul>
%s</ul></nav>
<main>
%s
</main>
</div>
<script src="%s"></script>
</body>
</html>
`, lang.dir, rel(""),
		rel(lang.dir+"/index.html"), b.word(doc{page: info.Path}, "Search"), b.word(doc{page: info.Path}, "Search"),
		rel(twin), other.html, switchLabel, nav.String(), body, rel("assets/book.js"))
	b.pages = append(b.pages, info)
	return b.write(info.Path, page)
}

// chapterTitle is the first heading of the chapter's README in lang, as
// the navigation shows it.
func (b *book) chapterTitle(lang string, c chapters.Chapter) string {
	suffix := ".md"
	if lang == "zh" {
		suffix = ".zh-CN.md"
	}
	data, err := os.ReadFile(b.repoPath(c.Dir() + "/README" + suffix))
	first, _, _ := strings.Cut(string(data), "\n")
	if title, ok := strings.CutPrefix(first, "# "); err == nil && ok {
		return title
	}
	return fmt.Sprintf("%d %s", c.Number, c.Slug)
}

// head is the start of every page, to its <body>: its language, its
// title and the style sheet at css. The page asks for no icon (a browser
// would ask the server for /favicon.ico).
func head(lang, title, css string) string {
	return fmt.Sprintf(`<!doctype html>
<html lang="%s">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="%s">
</head>
`, lang, html.EscapeString(title), html.EscapeString(css))
}

// write writes a file of the book.
func (b *book) write(p, content string) error {
	full := filepath.Join(b.out, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	return os.WriteFile(full, []byte(content), 0o644)
}

// diagram is the SVG that make check-diagrams rendered from the n-th
// Mermaid block of the file src, named as it names them, with its ids
// made its own: Mermaid gives every picture the same one, and a page shows
// several.
func (b *book) diagram(src string, n int) (string, error) {
	name := strings.NewReplacer("/", "_", ".md", "").Replace(src) + fmt.Sprintf("-%d", n)
	data, err := os.ReadFile(filepath.Join(b.diagrams, name+".svg"))
	if err != nil {
		return "", fmt.Errorf("%s: diagram %d was not rendered (make check-diagrams renders them): %w", src, n, err)
	}
	id := "diagram-" + strings.NewReplacer(".", "-", "_", "-").Replace(name)
	svg := strings.ReplaceAll(string(data), "my-svg", id)
	if i := strings.Index(svg, "<svg"); i > 0 {
		svg = svg[i:] // no XML declaration inside HTML
	}
	return svg, nil
}

// sourceViews writes the view of every file and directory a page linked
// to or quoted: a file's lines, numbered, each with its anchor; a
// directory's files, each with its view.
func (b *book) sourceViews() error {
	var dirs []string
	for p := range b.sources {
		if fi, err := os.Stat(b.repoPath(p)); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(b.repoPath(dir))
		if err != nil {
			return err
		}
		page := b.sourcePage(dir)
		var list strings.Builder
		for _, e := range entries {
			if e.IsDir() {
				fmt.Fprintf(&list, "<li>%s/</li>\n", html.EscapeString(e.Name()))
				continue
			}
			p := path.Join(dir, e.Name())
			b.sources[p] = true
			fmt.Fprintf(&list, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(b.relative(page, b.sourcePage(p))), html.EscapeString(e.Name()))
		}
		if err := b.writeSource(page, dir+"/", "<ul class=\"files\">\n"+list.String()+"</ul>"); err != nil {
			return err
		}
	}
	files := make([]string, 0, len(b.sources))
	for p := range b.sources {
		if !slices.Contains(dirs, p) {
			files = append(files, p)
		}
	}
	slices.Sort(files)
	for _, p := range files {
		data, err := os.ReadFile(b.repoPath(p))
		if err != nil {
			return err
		}
		var lines strings.Builder
		for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			fmt.Fprintf(&lines, "<span class=\"line\" id=\"L%d\"><a class=\"n\" href=\"#L%d\">%d</a>%s\n</span>", i+1, i+1, i+1, html.EscapeString(l))
		}
		if err := b.writeSource(b.sourcePage(p), p, "<pre class=\"source\"><code>"+lines.String()+"</code></pre>"); err != nil {
			return err
		}
	}
	return nil
}

// writeSource writes a source view: the path, and its content.
func (b *book) writeSource(page, title, content string) error {
	rel := func(to string) string { return html.EscapeString(b.relative(page, to)) }
	return b.write(page, head("en", title, rel("assets/book.css"))+fmt.Sprintf(`<body class="source-view">
<header class="top"><a class="home" href="%s">Redis operator</a> <span class="path">%s</span></header>
<main>
%s
</main>
</body>
</html>
`, rel("en/index.html"), html.EscapeString(title), content))
}
