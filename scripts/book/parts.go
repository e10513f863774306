package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"strconv"
	"strings"

	"example.com/redis-operator/chapters"
)

// words are the few words the book adds to the texts, in both languages.
var words = map[string]map[string]string{
	"quote-lines":   {"en": "%s, lines %d–%d", "zh": "%s，第 %d–%d 行"},
	"Hints":         {"en": "Hints (one at a time, as make hint gives them)", "zh": "提示（像 make hint 那样，一次看一条）"},
	"Mutants":       {"en": "Mutants", "zh": "变异体"},
	"mutants-intro": {"en": "Each is a bug kept beside the chapter, which a spec must catch: <code>make mutant N NAME</code> runs one.", "zh": "每个变异体都是放在这一章旁边的一个缺陷，必须有一个用例抓住它：<code>make mutant N NAME</code> 运行其中一个。"},
	"Why:":          {"en": "Why someone would write it:", "zh": "为什么有人会这样写："},
	"Caught by":     {"en": "Caught by", "zh": "抓住它的用例："},
	"in step":       {"en": "in step", "zh": "失败的步骤："},
	"The diff":      {"en": "The whole diff, side by side", "zh": "完整的代码差异（左右对照）"},
	"diff-intro":    {"en": "What chapter %d adds to chapter %d, file by file, as <code>make diff-chapter %d</code> shows it.", "zh": "第 %d 章在第 %d 章之上加了什么，逐个文件，和 <code>make diff-chapter %d</code> 显示的一样。"},
	"first-chapter": {"en": "The first chapter: its whole package is the lesson:", "zh": "第一章：整个包就是这一课："},
	"Start":         {"en": "Start here", "zh": "从这里开始"},
	"Testing":       {"en": "Testing operators", "zh": "测试 operator"},
	"Search":        {"en": "Search the course", "zh": "搜索课程"},
}

// word is a word of the book in the language of d's page.
func (b *book) word(d doc, key string) string {
	lang := "en"
	if strings.HasPrefix(d.page, "zh/") {
		lang = "zh"
	}
	w, ok := words[key][lang]
	if !ok {
		panic("the book has no word " + key)
	}
	return w
}

// fileDiff is one file's part of a unified diff.
type fileDiff struct {
	name  string
	hunks []hunk
}

type hunk struct {
	header string
	lines  []string // each with its sign: ' ', '-' or '+'
}

// parseDiff reads the unified diff make diff-chapter prints.
func parseDiff(unified string) []fileDiff {
	var files []fileDiff
	var cur *fileDiff
	var oldName string
	for _, l := range strings.Split(unified, "\n") {
		switch {
		case strings.HasPrefix(l, "diff "):
		case strings.HasPrefix(l, "--- "):
			oldName = strings.TrimPrefix(l, "--- ")
		case strings.HasPrefix(l, "+++ "):
			name := strings.TrimPrefix(l, "+++ ")
			if name == "/dev/null" {
				name = oldName
			}
			files = append(files, fileDiff{name: name})
			cur = &files[len(files)-1]
		case strings.HasPrefix(l, "@@") && cur != nil:
			cur.hunks = append(cur.hunks, hunk{header: l})
		case cur != nil && len(cur.hunks) > 0 && l != "" && strings.ContainsAny(l[:1], " +-"):
			h := &cur.hunks[len(cur.hunks)-1]
			h.lines = append(h.lines, l)
		case cur != nil && len(cur.hunks) > 0 && l == "":
			// diff -u writes an empty context line as a lone space; a line
			// with nothing is the end of the output.
		}
	}
	return files
}

// sideBySide is the file's diff as a table: the old lines on the left,
// the new on the right, a removed line beside the line that replaced it.
func (f fileDiff) sideBySide() string {
	var out strings.Builder
	fmt.Fprintf(&out, "<details class=\"file\" open><summary><code>%s</code></summary>\n<table class=\"side-by-side\">\n<colgroup><col class=\"n\"><col><col class=\"n\"><col></colgroup>\n", html.EscapeString(f.name))
	cell := func(class string, n int, text string) string {
		num := ""
		if n > 0 {
			num = strconv.Itoa(n)
		}
		return fmt.Sprintf("<td class=\"n\">%s</td><td class=\"%s\">%s</td>", num, class, html.EscapeString(text))
	}
	for _, h := range f.hunks {
		var oldN, newN int
		_, _ = fmt.Sscanf(h.header, "@@ -%d", &oldN)
		if _, after, ok := strings.Cut(h.header, " +"); ok {
			_, _ = fmt.Sscanf(after, "%d", &newN)
		}
		fmt.Fprintf(&out, "<tr class=\"hunk\"><td colspan=\"4\">%s</td></tr>\n", html.EscapeString(h.header))
		var removed, added []string
		flush := func() {
			for i := 0; i < max(len(removed), len(added)); i++ {
				left, right := cell("empty", 0, ""), cell("empty", 0, "")
				if i < len(removed) {
					left = cell("del", oldN, removed[i])
					oldN++
				}
				if i < len(added) {
					right = cell("add", newN, added[i])
					newN++
				}
				fmt.Fprintf(&out, "<tr>%s%s</tr>\n", left, right)
			}
			removed, added = nil, nil
		}
		for _, l := range h.lines {
			switch l[0] {
			case '-':
				if len(added) > 0 {
					flush()
				}
				removed = append(removed, l[1:])
			case '+':
				added = append(added, l[1:])
			default:
				flush()
				fmt.Fprintf(&out, "<tr>%s%s</tr>\n", cell("ctx", oldN, l[1:]), cell("ctx", newN, l[1:]))
				oldN++
				newN++
			}
		}
		flush()
	}
	out.WriteString("</table>\n</details>\n")
	return out.String()
}

// searchIndexes writes each language's index: every page's title, path
// and text, and the glossary's terms, so that a search for a term finds
// the pages that use its other name (终结器 finds finalizer).
func (b *book) searchIndexes() error {
	synonyms, err := b.glossarySynonyms()
	if err != nil {
		return err
	}
	for _, l := range langs {
		type entry struct {
			T string `json:"t"`
			P string `json:"p"`
			X string `json:"x"`
		}
		var entries []entry
		for _, p := range b.pages {
			if p.Lang == l.dir {
				entries = append(entries, entry{p.Title, p.Path, strings.Join(strings.Fields(p.text), " ")})
			}
		}
		idx, err := json.Marshal(entries)
		if err != nil {
			return err
		}
		syn, err := json.Marshal(synonyms)
		if err != nil {
			return err
		}
		if err := b.write(l.dir+"/search-index.js", fmt.Sprintf("window.BOOK_INDEX = %s;\nwindow.BOOK_SYNONYMS = %s;\n", idx, syn)); err != nil {
			return err
		}
	}
	return nil
}

// glossarySynonyms reads the glossary's table: each Chinese term (and the
// other names in its parentheses, or after a slash) and its English one
// find each other.
func (b *book) glossarySynonyms() (map[string][]string, error) {
	data, err := os.ReadFile(b.repoPath("GLOSSARY.zh-CN.md"))
	if err != nil {
		return nil, err
	}
	names := func(cell string) []string {
		var out []string
		for _, n := range strings.FieldsFunc(cell, func(r rune) bool { return strings.ContainsRune("/（）()、", r) }) {
			if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	syn := map[string][]string{}
	for _, row := range strings.Split(string(data), "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "中文" {
			continue
		}
		all := append(names(cells[1]), names(cells[2])...)
		for _, n := range all {
			for _, other := range all {
				if other != n && !strings.Contains(strings.Join(syn[n], "\x00"), other) {
					syn[n] = append(syn[n], other)
				}
			}
		}
	}
	return syn, nil
}

//go:embed book.css
var css string

//go:embed book.js
var js string

// assets writes the style, the script, and the page that chooses a
// language.
func (b *book) assets() error {
	if err := b.write("assets/book.css", css); err != nil {
		return err
	}
	if err := b.write("assets/book.js", js); err != nil {
		return err
	}
	var list strings.Builder
	for _, c := range chapters.All {
		fmt.Fprintf(&list, "<li>%d <a href=\"en/chapters/%s.html\">%s</a> · <a href=\"zh/chapters/%s.html\">中文</a></li>\n", c.Number, c.Name(), c.Slug, c.Name())
	}
	return b.write("index.html", head("en", "Redis operator: a course", "assets/book.css")+fmt.Sprintf(`<body>
<main class="landing">
<h1>Redis operator: a course in controller-runtime and its testing</h1>
<p><a href="en/index.html">English</a> · <a href="zh/index.html">简体中文</a></p>
<ul>
%s</ul>
</main>
</body>
</html>
`, list.String()))
}
