package main

import (
	"strings"
	"testing"
)

// The anchors are GitHub's, which the READMEs' links were written for.
func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"The middle rung: an API server alone":  "the-middle-rung-an-api-server-alone",
		"What must happen: `Eventually`":        "what-must-happen-eventually",
		"中间一级：单独的 API server":                   "中间一级单独的-api-server",
		"Try it":                                "try-it",
		"[a link](x.md) in a heading":           "a-link-in-a-heading",
		"A chapter's diff, file by file (5/15)": "a-chapters-diff-file-by-file-515",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
	ids := newGitHubIDs()
	for _, want := range []string{"hints", "hints-1", "hints-2"} {
		if got := string(ids.Generate([]byte("Hints"), 0)); got != want {
			t.Errorf("a repeated heading's anchor = %q, want %q", got, want)
		}
	}
}

// A document's link goes to the page of what it names, relative to the
// page it is on.
func TestLink(t *testing.T) {
	b := &book{root: "../..", sources: map[string]bool{}}
	readme := doc{src: "chapters/05-rebuild-pods/README.md", page: "en/chapters/05-rebuild-pods.html"}
	zh := doc{src: "chapters/05-rebuild-pods/README.zh-CN.md", page: "zh/chapters/05-rebuild-pods.html"}
	for _, tt := range []struct {
		d          doc
		dest, want string
	}{
		{readme, "../04-watch-pod-deletes/README.md", "04-watch-pod-deletes.html"},
		{readme, "../../README.md#try-it-yourself", "../index.html#try-it-yourself"},
		{readme, "../../TESTING.md", "../testing.html"},
		{zh, "../../README.zh-CN.md#自己动手", "../index.html#自己动手"},
		{readme, "exercise/TASK.md", "05-rebuild-pods.html#exercise"},
		{readme, "../../tests/chapter05", "../../src/tests/chapter05/index.html"},
		{readme, "../../tests/framework/framework.go", "../../src/tests/framework/framework.go.html"},
		{readme, "https://kind.sigs.k8s.io", "https://kind.sigs.k8s.io"},
		{readme, "#the-idea", "#the-idea"},
		{readme, "../../no-such-file.go", "../../no-such-file.go"},
	} {
		if got := b.link(tt.d, tt.dest); got != tt.want {
			t.Errorf("%s: link %q = %q, want %q", tt.d.src, tt.dest, got, tt.want)
		}
	}
	if !b.sources["tests/chapter05"] || !b.sources["tests/framework/framework.go"] {
		t.Errorf("the linked files get no source view: %v", b.sources)
	}
}

// A diff is shown side by side: a removed line beside the one that
// replaced it, context on both sides, numbered as the files are.
func TestSideBySide(t *testing.T) {
	files := parseDiff(`diff -ruN a/x.go b/x.go
--- a/x.go
+++ b/x.go
@@ -10,4 +10,5 @@
 func f() {
-	old()
+	new()
+	more()
 }
--- /dev/null
+++ chapters/10-in-cluster/Dockerfile
@@ -0,0 +1 @@
+FROM scratch
`)
	if len(files) != 2 || files[0].name != "b/x.go" || files[1].name != "chapters/10-in-cluster/Dockerfile" {
		t.Fatalf("files: %+v", files)
	}
	table := files[0].sideBySide()
	for _, want := range []string{
		`<td class="n">11</td><td class="del">	old()</td><td class="n">11</td><td class="add">	new()</td>`,
		`<td class="n"></td><td class="empty"></td><td class="n">12</td><td class="add">	more()</td>`,
		`<td class="n">10</td><td class="ctx">func f() {</td><td class="n">10</td><td class="ctx">func f() {</td>`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table has no %s:\n%s", want, table)
		}
	}
}

// The glossary's other names find each other: 终结器 finds finalizer.
func TestGlossarySynonyms(t *testing.T) {
	b := &book{root: "../.."}
	syn, err := b.glossarySynonyms()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(syn["终结器"], ","), "finalizer") {
		t.Errorf("终结器 does not find finalizer: %v", syn["终结器"])
	}
	if !strings.Contains(strings.Join(syn["reconcile"], ","), "调谐") {
		t.Errorf("reconcile does not find 调谐: %v", syn["reconcile"])
	}
}
