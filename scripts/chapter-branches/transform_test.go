package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"example.com/redis-operator/internal/makefile"
)

const module = "example.com/redis-operator"

var ch3 = chapter{Number: 3, Slug: "owner-references"}

func TestRenamePackage(t *testing.T) {
	src := "// Package chapter03 is the end-to-end suite of chapter 3.\npackage chapter03\n\nvar x = 1\n"
	got, err := renamePackage([]byte(src), "e2e")
	if err != nil {
		t.Fatal(err)
	}
	want := "// Package e2e is the end-to-end suite of chapter 3.\npackage e2e\n\nvar x = 1\n"
	if string(got) != want {
		t.Errorf("renamePackage =\n%s\nwant\n%s", got, want)
	}

	got, err = renamePackage([]byte("package chapter03_test\n"), "e2e")
	if err != nil || string(got) != "package e2e_test\n" {
		t.Errorf("renamePackage of an external test package = %q, %v; want package e2e_test", got, err)
	}

	same := []byte("// Package controller is chapter 3.\npackage controller\n")
	if got, err := renamePackage(same, "controller"); err != nil || string(got) != string(same) {
		t.Errorf("renamePackage to its own name changed the file: %q, %v", got, err)
	}
}

func TestRewriteImports(t *testing.T) {
	src := `package e2e

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"

	myappv1 "example.com/redis-operator/api/v1"
	"example.com/redis-operator/operator/controller"
	"example.com/redis-operator/tests/framework"
)
`
	got, err := rewriteImports([]byte(src), func(p string) (string, error) { return importPath(p, module, ch3) })
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.NewReplacer("/tests/framework", "/test/e2e/framework", "/operator/controller", "/internal/controller").Replace(src); string(got) != want {
		t.Errorf("rewriteImports =\n%s\nwant\n%s", got, want)
	}

	_, err = rewriteImports([]byte("package x\n\nimport _ \"example.com/redis-operator/chapters/02-finalizer-tracking\"\n"),
		func(p string) (string, error) { return importPath(p, module, ch3) })
	if err == nil || !strings.Contains(err.Error(), "chapter/03-owner-references does not have") {
		t.Errorf("importing another chapter: error %v, want one that names the branch", err)
	}
}

func TestBranchPath(t *testing.T) {
	for course, want := range map[string]string{
		"chapters/03-owner-references/redis_controller.go": "internal/controller/redis_controller.go",
		"chapters/03-owner-references/role.yaml":           "config/rbac/role.yaml",
		"chapters/03-owner-references/README.md":           "README.md",
		"chapters/03-owner-references/README.zh-CN.md":     "README.zh-CN.md",
		"chapters/03-owner-references":                     "internal/controller",
		"tests/chapter03":                                  "test/e2e",
		"tests/chapter03/chapter03_test.go":                "test/e2e/e2e_test.go",
		"tests/chapter03/suite_test.go":                    "test/e2e/e2e_suite_test.go",
		"tests/framework/operator.go":                      "test/e2e/framework/operator.go",
		"operator/main.go":                                 "cmd/main.go",
		"api/v1/redis_types.go":                            "api/v1/redis_types.go",
		"internal/cluster/provider.go":                     "internal/cluster/provider.go",
		"tests/fakeapi/fakeapi.go":                         "test/fakeapi/fakeapi.go",
		"scripts/kind-node-image/build.sh":                 "scripts/kind-node-image/build.sh",
		"config/samples/myapp_v1_redis.yaml":               "config/samples/myapp_v1_redis.yaml",
		"go.sum":                                           "go.sum",
		// Not in the branch:
		"chapters/02-finalizer-tracking/redis_controller.go": "",
		"tests/chapter02/chapter02_test.go":                  "",
		"config/rbac/role.yaml":                              "",
		"operator/controller/controller.go":                  "",
		"tests/docs/sync_test.go":                            "",
		"tests/tryit/tryit_test.go":                          "",
		"scripts/certs/certs.go":                             "",
		"scripts/prove/main.go":                              "",
		"scripts/chapter-branches/main.go":                   "",
		".ci/run":                                            "",
		"README.md":                                          "",
		"apis/v2/x.go":                                       "",
	} {
		got, ok := branchPath(course, ch3)
		if got != want || ok != (want != "") {
			t.Errorf("branchPath(%q) = %q, %v; want %q", course, got, ok, want)
		}
	}
}

// TestArrivals: make diff-chapter N shows, beside the chapter's package,
// the files outside the chapters that come with chapter N, and only those.
func TestArrivals(t *testing.T) {
	files := []string{
		"chapters/10-in-cluster/redis_controller.go", "tests/framework/deployed.go",
		"config/manager/manager.yaml", "config/rbac/role.yaml", "config/rbac/service_account.yaml",
		"config/webhook/service.yaml", "config/webhook/manifests.yaml", "config/crd/kustomization.yaml",
		"scripts/deploy.mk", "scripts/image/image.go", "scripts/certs/certs.go",
		"operator/faults.go", "operator/faults/faults.go", "operator/main.go",
		"scripts/prove/main.go", "README.md",
	}
	for n, want := range map[int][]string{
		9:  nil,
		10: {"config/manager/manager.yaml", "config/rbac/service_account.yaml", "scripts/deploy.mk", "scripts/image/image.go"},
		11: {"config/webhook/service.yaml", "scripts/certs/certs.go"},
		12: {"operator/faults.go", "operator/faults/faults.go"},
		13: nil,
	} {
		if got := arrivals(n, files); !slices.Equal(got, want) {
			t.Errorf("arrivals(%d) = %q, want %q", n, got, want)
		}
	}
}

// readCourse reads a file of this repository's work tree, for the tests
// that check the rules against the course's real files.
func readCourse(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTransform: cmd/main.go is the course's operator/main.go with two
// imports changed: operator/controller is internal/controller, since the
// course's operator/controller and the chapter's package both offer
// NewManager, and operator/trace is internal/trace; the
// chapter's package is named controller and the suite e2e; the
// framework's messages name make test-e2e.
func TestTransform(t *testing.T) {
	main := readCourse(t, "operator/main.go")
	want := strings.Replace(string(main), `"`+module+`/operator/controller"`, `"`+module+`/internal/controller"`, 1)
	if want == string(main) {
		t.Fatal("operator/main.go does not import operator/controller")
	}
	want = strings.Replace(want, `"`+module+`/operator/trace"`, `"`+module+`/internal/trace"`, 1)
	if got, err := transform("cmd/main.go", main, &source{module: module}, ch3); err != nil || string(got) != want {
		t.Errorf("transform(cmd/main.go) = %q, %v; want the course's file importing internal/controller and internal/trace", got, err)
	}
	if !strings.Contains(string(main), "controller.NewManager(cfg, ") {
		t.Error("operator/main.go does not call controller.NewManager, which every chapter's package offers")
	}

	got, err := transform("internal/controller/redis_controller.go", []byte("package controller\n"), &source{module: module}, ch3)
	if err != nil || got != nil {
		t.Errorf("transform of the chapter's package = %q, %v; want it as it is", got, err)
	}
	got, err = transform("test/e2e/e2e_test.go", []byte("package chapter03_test\n"), &source{module: module}, ch3)
	if err != nil || string(got) != "package e2e_test\n" {
		t.Errorf("transform of the suite = %q, %v; want package e2e_test", got, err)
	}
	got, err = transform("test/e2e/framework/kubectl.go", []byte("package framework\n\n// run `make test-chapter N`\n"), &source{module: module}, ch3)
	if err != nil || string(got) != "package framework\n\n// run `make test-e2e`\n" {
		t.Errorf("transform of the framework = %q, %v; want make test-e2e", got, err)
	}
}

// TestChapterMakefile: the branch's Makefile knows its chapter, for make
// run N.
func TestChapterMakefile(t *testing.T) {
	got := string(chapterMakefile([]byte(branchMakefileTemplate), ch3))
	if !strings.Contains(got, "\nCHAPTER := 3\n") || strings.Contains(got, chapterMarker) {
		t.Errorf("the Makefile of chapter 3 does not say CHAPTER := 3:\n%s", got)
	}
}

func TestBranchReadme(t *testing.T) {
	s := &source{chapters: []chapter{{Number: 1, Slug: "create-pods"}, {Number: 2, Slug: "finalizer-tracking"}, ch3, {Number: 4, Slug: "watch-pod-deletes"}}}
	files := map[string]output{
		"README.md": {}, "README.zh-CN.md": {}, "cmd/main.go": {}, "api/v1/redis_types.go": {},
		"internal/controller/redis_controller.go": {}, "config/rbac/role.yaml": {}, "test/e2e/e2e_test.go": {},
	}
	lesson := "# Chapter 3: owner references\n\nText.\n\n" +
		"[`redis_controller.go`](redis_controller.go), [`role.yaml`](role.yaml), " +
		"[`cmd/main.go`](../../cmd/main.go), [`internal/controller`](../../internal/controller/controller.go), " +
		"[tests/chapter03](../../tests/chapter03), [API](../../api/v1/redis_types.go#L10), " +
		"[`config/rbac/role.yaml`](../../config/rbac/role.yaml), [the course](../../README.md), " +
		"[Chapter\n  4](../04-watch-pod-deletes/README.md), [series](https://example.com/x.md), [up](#the-idea), " +
		"[中文](README.zh-CN.md), [Testing operators](../../TESTING.md).\n\n" +
		"```go quote=tests/chapter03/chapter03_test.go\nIt()\n```\n\n" +
		"```diff quote=chapters/03-owner-references/mutants/m.patch\n+x\n```\n"
	got := string(branchReadme([]byte(lesson), "README.md", s, ch3, files))
	for _, want := range []string{
		"<!-- Generated by `make chapter-branches` from chapters/03-owner-references/README.md",
		"# Chapter 3: owner references\n\n> **Branch `chapter/03-owner-references`**",
		"`git diff chapter/02-finalizer-tracking chapter/03-owner-references` shows this lesson",
		"[`redis_controller.go`](internal/controller/redis_controller.go)",
		"[`role.yaml`](config/rbac/role.yaml)",
		"[`cmd/main.go`](cmd/main.go)",
		"`internal/controller`, ",
		"[test/e2e](test/e2e)",
		"[API](api/v1/redis_types.go#L10)",
		"[`config/rbac/role.yaml`](config/rbac/role.yaml)",
		"the course (the course repository's README)",
		"Chapter\n  4 (branch `chapter/04-watch-pod-deletes`)",
		"[series](https://example.com/x.md)",
		"[up](#the-idea)",
		"[中文](README.zh-CN.md)",
		"Testing operators (a page of the course repository)",
		"```go quote=test/e2e/e2e_test.go\n",
		"```diff\n+x\n",
		"中文：[README.zh-CN.md](README.zh-CN.md)",
		"\n\nText.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("README lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "](../") {
		t.Errorf("README keeps a link into the course's layout:\n%s", got)
	}

	zh := string(branchReadme([]byte("# 第 3 章\n\n见[第 4 章](../04-watch-pod-deletes/README.zh-CN.md)。\n"), "README.zh-CN.md", s, ch3, files))
	for _, want := range []string{"> **分支 `chapter/03-owner-references`**", "第 4 章（分支 `chapter/04-watch-pod-deletes`）", "English: [README.md](README.md)"} {
		if !strings.Contains(zh, want) {
			t.Errorf("README.zh-CN.md lacks %q:\n%s", want, zh)
		}
	}
}

func TestPinnedVersions(t *testing.T) {
	got, err := pinnedVersions(string(readCourse(t, "Makefile")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# ---- pinned versions", "KUBERNETES_VERSION ?=", "CONTROLLER_TOOLS_VERSION ?=", "GOLANGCI_LINT_VERSION ?="} {
		if !strings.Contains(got, want) {
			t.Errorf("the pinned versions lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "# ---- paths") {
		t.Errorf("the pinned versions run into the next section:\n%s", got)
	}
	if _, err := pinnedVersions("all:\n"); err == nil {
		t.Error("pinnedVersions of a Makefile without the section: no error")
	}
}

func TestParseDiff(t *testing.T) {
	gnu := "diff -ruN '--exclude=README.md' chapters/01-a/x.go chapters/02-b/x.go\n" +
		"--- chapters/01-a/x.go\n+++ chapters/02-b/x.go\n" +
		"@@ -1,3 +1,3 @@\n a\n--- not a header\n+++ not one either\n c\n" +
		"@@ -9 +9 @@\n-old\n+new\n\\ No newline at end of file\n"
	got, err := parseDiff(gnu)
	if err != nil {
		t.Fatal(err)
	}
	want := "@@ -1,3 +1,3 @@\n a\n--- not a header\n+++ not one either\n c\n" +
		"@@ -9,1 +9,1 @@\n-old\n+new\n\\ No newline at end of file\n"
	if len(got) != 1 || got["chapters/02-b/x.go"] != want {
		t.Errorf("parseDiff = %q\nwant %q", got, want)
	}

	git := "diff --git a/internal/controller/x.go b/internal/controller/x.go\nindex 1..2 100644\n" +
		"--- a/internal/controller/x.go\n+++ b/internal/controller/x.go\n" +
		"@@ -1,3 +1,3 @@ func f() {\n a\n--- not a header\n+++ not one either\n c\n" +
		"diff --git a/y.go b/y.go\ndeleted file mode 100644\n--- a/y.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n"
	got, err = parseDiff(git)
	if err != nil {
		t.Fatal(err)
	}
	if got["internal/controller/x.go"] != "@@ -1,3 +1,3 @@\n a\n--- not a header\n+++ not one either\n c\n" || got["y.go"] != "@@ -1,1 +0,0 @@\n-y\n" {
		t.Errorf("parseDiff of git's diff = %q", got)
	}

	if _, err := parseDiff("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n"); err == nil {
		t.Error("parseDiff of a hunk cut short: no error")
	}
}

// TestGoModTidy: a requirement that no file of the module needs goes, as
// go mod tidy removes it, and nothing needs the network.
func TestGoModTidy(t *testing.T) {
	files := map[string][]byte{
		"go.mod":           []byte("module example.com/m\n\ngo 1.26\n\nrequire example.com/unused v0.0.0\n\nreplace example.com/unused => ./unused\n"),
		"main.go":          []byte("package main\n\nfunc main() {}\n"),
		"unused/go.mod":    []byte("module example.com/unused\n\ngo 1.26\n"),
		"unused/unused.go": []byte("package unused\n"),
	}
	got, err := goModTidy(files)
	if err != nil {
		t.Fatal(err)
	}
	if want := "module example.com/m\n\ngo 1.26\n\nreplace example.com/unused => ./unused\n"; string(got["go.mod"]) != want {
		t.Errorf("go.mod after tidy:\n%s\nwant:\n%s", got["go.mod"], want)
	}
	if _, ok := got["go.sum"]; ok {
		t.Errorf("go.sum after tidy: %q, want none", got["go.sum"])
	}
}

// TestBranchImports: the course's hunks name the packages where the
// branch has them, as the branch's files import them.
func TestBranchImports(t *testing.T) {
	hunks := "@@ -1,3 +1,3 @@\n \tmyappv1 \"" + module + "/api/v1\"\n-\t\"" + module + "/tests/fakeapi\"\n+\t\"fmt\"\n \t\"" + module + "/tests/framework\"\n"
	want := "@@ -1,3 +1,3 @@\n \tmyappv1 \"" + module + "/api/v1\"\n-\t\"" + module + "/test/fakeapi\"\n+\t\"fmt\"\n \t\"" + module + "/test/e2e/framework\"\n"
	if got := branchImports(hunks, module, ch3); got != want {
		t.Errorf("branchImports =\n%s\nwant\n%s", got, want)
	}
}

// TestBranchMakefileBuildsWhatItRuns: a branch's Makefile, as the course's
// (tests/makefile), reads no variable before it is defined, and its
// targets that run the operator or the suite build them first; in the
// branches of a chapter on the host, of the first in the cluster, of the
// first with the webhook, of the one with faults, and of a rewrite.
func TestBranchMakefileBuildsWhatItRuns(t *testing.T) {
	rendered, err := renderBranchMakefile(readCourse(t, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	type command struct {
		goals string
		vars  []string
		needs []string
	}
	for _, c := range []chapter{{Number: 1, Slug: "create-pods"}, {Number: 10, Slug: "in-cluster"}, {Number: 11, Slug: "admission"}, {Number: 12, Slug: "crash-every-write"}, {Number: 14, Slug: "apiserver-away"}, {Number: 15, Slug: "under-the-hood"}} {
		dir := t.TempDir()
		writeFile(t, dir, "Makefile", string(chapterMakefile(rendered, c)), 0o644)
		include, err := chapterInclude(c)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, "scripts/chapters.mk", string(include), 0o644)
		writeFile(t, dir, "scripts/common.mk", string(readCourse(t, "scripts/common.mk")), 0o644)
		commands := []command{
			{goals: fmt.Sprintf("run %d", c.Number), needs: []string{"build"}},
			{goals: "test-e2e", needs: []string{"build", "$(GINKGO)", "cluster-tool"}},
		}
		if _, ok := branchPath("scripts/deploy.mk", c); ok {
			writeFile(t, dir, "scripts/deploy.mk", string(readCourse(t, "scripts/deploy.mk")), 0o644)
			commands = append(commands, command{goals: fmt.Sprintf("deploy %d", c.Number), needs: []string{"docker-build", "cluster-tool"}})
		}
		if _, ok := branchPath("operator/faults.go", c); ok {
			commands = append(commands,
				command{goals: fmt.Sprintf("run %d", c.Number), vars: []string{"FAULTS=true"}, needs: []string{"build", "build-faults"}},
				command{goals: "test-faults", needs: []string{"build", "build-faults", "$(GINKGO)"}})
		}
		for _, cmd := range commands {
			db, err := makefile.Read(makefile.Input{Dir: dir, Goals: cmd.goals, Vars: cmd.vars})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range db.Undefined {
				t.Errorf("%s: make %s %v: %s", c.Branch(), cmd.goals, cmd.vars, w)
			}
			target := strings.Fields(cmd.goals)[0]
			for _, need := range db.Missing(target, cmd.needs...) {
				t.Errorf("%s: make %s %v: %s is not among its prerequisites (%s: %v)", c.Branch(), cmd.goals, cmd.vars, need, target, db.Rules[target].Prereqs)
			}
		}
	}
}

// TestTidyHint: go mod tidy's failure for want of the network says which
// command fills the module cache; any other failure says nothing more.
func TestTidyHint(t *testing.T) {
	offline := "go: github.com/joshdk/go-junit@v1.0.0: module lookup disabled by GOPROXY=off"
	if hint := tidyHint(offline); !strings.Contains(hint, "go mod tidy -diff") {
		t.Errorf("tidyHint(%q) = %q, want the command that fills the cache", offline, hint)
	}
	if hint := tidyHint("main.go:3:1: syntax error"); hint != "" {
		t.Errorf("tidyHint of a syntax error = %q, want none", hint)
	}
}

func TestRequires(t *testing.T) {
	gomod := "module m\n\ngo 1.26\n\nrequire example.com/a v1.0.0\n\nrequire (\n\texample.com/b v0.2.0 // indirect\n\texample.com/c v0.3.0\n)\n\nreplace example.com/d => ./d\n"
	got := requires([]byte(gomod))
	want := map[string]string{"example.com/a": "v1.0.0", "example.com/b": "v0.2.0", "example.com/c": "v0.3.0"}
	if len(got) != len(want) {
		t.Fatalf("requires = %v, want %v", got, want)
	}
	for m, v := range want {
		if got[m] != v {
			t.Errorf("requires[%s] = %q, want %q", m, got[m], v)
		}
	}
}
