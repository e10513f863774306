package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// course is the checkout this test runs in.
var course = &exercises{root: filepath.Join("..", ".."), dir: "_exercise"}

// Each exercise's task names the lesson unit tests that make check runs,
// in both languages: the tests chapter N adds or changes.
func TestTasksNameTheLessonUnitTests(t *testing.T) {
	names := regexp.MustCompile("`(Test\\w+)`")
	chapters := course.withExercise(taskFile)
	if len(chapters) == 0 {
		t.Fatal("no chapter has an exercise")
	}
	for _, n := range chapters {
		e, err := course.exercise(n, taskFile)
		if err != nil {
			t.Fatal(err)
		}
		want, err := lessonTests(course.prevPath(e), course.path(e.chapterDir))
		if err != nil {
			t.Fatal(err)
		}
		for _, page := range []string{taskFile, "TASK.zh-CN.md"} {
			data, err := os.ReadFile(course.path(e.chapterDir, "exercise", page))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range names.FindAllStringSubmatch(string(data), -1) {
				got = append(got, m[1])
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("chapter %d's %s names the unit tests %v; the lesson's are %v", n, page, got, want)
			}
		}
	}
}

// Hints point the way; none of them is code.
func TestHintsHoldNoCode(t *testing.T) {
	for _, n := range course.withExercise(taskFile) {
		e, _ := course.exercise(n, taskFile)
		for _, page := range []string{hintsFile, "HINTS.zh-CN.md", specHintsFile, "SPEC-HINTS.zh-CN.md"} {
			if page == specHintsFile || page == "SPEC-HINTS.zh-CN.md" {
				if _, err := os.Stat(course.path(e.chapterDir, "exercise", specTaskFile)); err != nil {
					continue
				}
			}
			data, err := os.ReadFile(course.path(e.chapterDir, "exercise", page))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "```") {
				t.Errorf("chapter %d's %s has a code block: a hint shows the way, not the code", n, page)
			}
			if got := len(sections(string(data))); got < 2 {
				t.Errorf("chapter %d's %s has %d hints, want tiers (## sections)", n, page, got)
			}
		}
	}
}

// A spec exercise's skeleton names the chapter's spec it stands for, and
// that spec has mutants for the learner's spec to kill.
func TestSpecExercisesStandForASpecWithMutants(t *testing.T) {
	chapters := course.withExercise(specTaskFile)
	if len(chapters) == 0 {
		t.Fatal("no chapter has a spec exercise")
	}
	for _, n := range chapters {
		e, err := course.exercise(n, specTaskFile)
		if err != nil {
			t.Fatal(err)
		}
		target, err := course.specTarget(e)
		if err != nil {
			t.Fatal(err)
		}
		patches, _ := filepath.Glob(course.path(e.chapterDir, "mutants", "*.patch"))
		var killers int
		for _, p := range patches {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "\nSpec: "+target+"\n") {
				killers++
			}
		}
		if killers == 0 {
			t.Errorf("chapter %d's spec exercise stands for %q, which no mutant of the chapter names (Spec:)", n, target)
		}
		skeleton, err := os.ReadFile(course.path(e.chapterDir, "exercise", specTemplateFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"//go:build e2e", "framework.Exercise", fmt.Sprintf("package chapter%02d", n)} {
			if !strings.Contains(string(skeleton), want) {
				t.Errorf("chapter %d's spec skeleton lacks %q", n, want)
			}
		}
	}
}

// make bench-check times make check to the line with which prove --check
// says the lesson specs passed: the two commands spell it the same.
func TestLessonsPassedIsProvesLine(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "prove", "check.go"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("const lessonsPassed = %q", lessonsPassed); !strings.Contains(string(src), want) {
		t.Errorf("scripts/prove/check.go does not say %s: make bench-check would never see the lessons' verdict", want)
	}
}

func TestLessonTestsAreTheAddedAndChanged(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a/x_test.go", "package x\n\nfunc TestSame(t *T) { a() }\n\n// old words\nfunc TestCommentChanges(t *T) { b() }\n\nfunc TestChanged(t *T) { c() }\n\nfunc TestRemoved(t *T) {}\n")
	write(t, dir, "b/x_test.go", "package x\n\nfunc TestSame(t *T) { a() }\n\n// new words\nfunc TestCommentChanges(t *T) { b() }\n\nfunc TestChanged(t *T) { c(1) }\n\nfunc TestAdded(t *T) {}\n\nfunc helper() {}\n")
	got, err := lessonTests(filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"TestAdded", "TestChanged"}; !slices.Equal(got, want) {
		t.Errorf("lessonTests = %v, want %v", got, want)
	}
}

// start copies chapter N-1's package, not its tests or its README, and
// never overwrites what the learner changed unless forced.
func TestStartKeepsTheLearnersChanges(t *testing.T) {
	root := t.TempDir()
	write(t, root, "chapters/01-create-pods/doc.go", "package controller\n")
	write(t, root, "chapters/01-create-pods/first_test.go", "package controller\n")
	write(t, root, "chapters/01-create-pods/README.md", "# one\n")
	write(t, root, "chapters/01-create-pods/crd/patch.yaml", "x: 1\n")
	write(t, root, "chapters/02-finalizer-tracking/doc.go", "package controller\n// two\n")
	write(t, root, "chapters/02-finalizer-tracking/exercise/TASK.md", "# task\n")
	ex := &exercises{root: root, dir: "_exercise"}

	if _, err := ex.exercise(1, taskFile); err == nil || !strings.Contains(err.Error(), "the chapters with one: 2") {
		t.Errorf("exercise(1) = %v, want: no exercise, and the chapters with one", err)
	}
	e, err := ex.exercise(2, taskFile)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := ex.start(e, false, false, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Exercise 2, finalizer tracking: your workspace is _exercise/02-finalizer-tracking") {
		t.Errorf("start says %q", out.String())
	}
	ws := filepath.Join(root, "_exercise", "02-finalizer-tracking")
	if got := files(t, ws); !slices.Equal(got, []string{".start", "crd/patch.yaml", "doc.go"}) {
		t.Errorf("workspace holds %v, want chapter 1's package: doc.go and crd/", got)
	}
	if p, _ := ex.readProgress(); p.Current != 2 {
		t.Errorf("progress: current = %d, want 2", p.Current)
	}

	// Unchanged, it may start again.
	if err := ex.start(e, false, false, &out); err != nil {
		t.Fatalf("start over an unchanged workspace: %v", err)
	}
	write(t, ws, "doc.go", "package controller\n// mine\n")
	write(t, ws, "extra.go", "package controller\n")
	if err := os.Remove(filepath.Join(ws, "crd", "patch.yaml")); err != nil {
		t.Fatal(err)
	}
	err = ex.start(e, false, false, &out)
	if err == nil {
		t.Fatal("start over a changed workspace succeeded")
	}
	for _, want := range []string{"crd/patch.yaml (deleted)", "doc.go", "extra.go", "FORCE=yes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "doc.go")); string(data) != "package controller\n// mine\n" {
		t.Error("the refused start changed the learner's doc.go")
	}
	if err := ex.start(e, true, false, &out); err != nil {
		t.Fatalf("forced start: %v", err)
	}
	if got := files(t, ws); !slices.Equal(got, []string{".start", "crd/patch.yaml", "doc.go"}) {
		t.Errorf("after a forced start the workspace holds %v", got)
	}
}

// make exercise N CONTINUE=yes starts from the learner's own chapter
// N-1, once make check passed it, with chapter N's stubs on top; when
// the stubs do not fit the learner's code, it says what to do and leaves
// no workspace.
func TestStartContinuesFromTheLearnersOwn(t *testing.T) {
	root := t.TempDir()
	write(t, root, "chapters/01-create-pods/doc.go", "package controller\n")
	write(t, root, "chapters/01-create-pods/exercise/TASK.md", "# task\n")
	write(t, root, "chapters/02-finalizer-tracking/doc.go", "package controller\n\n// two\n")
	write(t, root, "chapters/02-finalizer-tracking/exercise/TASK.md", "# task\n")
	write(t, root, "chapters/03-owner-references/doc.go", "package controller\n\n// three\n")
	write(t, root, "chapters/03-owner-references/exercise/TASK.md", "# task\n")
	write(t, root, "chapters/03-owner-references/exercise/start.patch", "Adds: nothing; changes doc.go's comment.\n"+
		"--- a/doc.go\n+++ b/doc.go\n@@ -1,3 +1,3 @@\n package controller\n \n-// two\n+// three, to come\n")
	ex := &exercises{root: root, dir: "_exercise"}
	e1, _ := ex.exercise(1, taskFile)
	e2, _ := ex.exercise(2, taskFile)
	e3, err := ex.exercise(3, taskFile)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, c := range []struct {
		e    *exercise
		want string
	}{
		{e1, "no exercise before it"},
		{e3, "no workspace of chapter 2's exercise (_exercise/02-finalizer-tracking)"},
	} {
		if err := ex.start(c.e, false, true, &out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("start %d --continue = %v, want an error that says %q", c.e.n, err, c.want)
		}
	}

	if err := ex.start(e2, false, false, &out); err != nil {
		t.Fatal(err)
	}
	// The learner's chapter 2: the chapter's doc.go, and a file of theirs.
	ws2 := filepath.Join(root, "_exercise", "02-finalizer-tracking")
	write(t, ws2, "doc.go", "package controller\n\n// two\n")
	write(t, ws2, "mine.go", "package controller\n")
	if err := ex.start(e3, false, true, &out); err == nil || !strings.Contains(err.Error(), "has not passed make check 2 (last: never run)") {
		t.Errorf("start 3 --continue from an unchecked chapter 2 = %v, want a refusal", err)
	}
	if err := ex.updateProgress(func(p *progress) { p.chapter(2).LastCheck = "passed" }); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := ex.start(e3, false, true, &out); err != nil {
		t.Fatal(err)
	}
	ws3 := filepath.Join(root, "_exercise", "03-owner-references")
	if got := files(t, ws3); !slices.Equal(got, []string{".start", "doc.go", "mine.go"}) {
		t.Errorf("the continued workspace holds %v, want the learner's chapter 2: doc.go and mine.go", got)
	}
	if data, _ := os.ReadFile(filepath.Join(ws3, "doc.go")); string(data) != "package controller\n\n// three, to come\n" {
		t.Errorf("the continued workspace's doc.go is %q, want the learner's with the start patch applied", data)
	}
	if !strings.Contains(out.String(), "your own chapter 2 from _exercise/02-finalizer-tracking") {
		t.Errorf("start says %q", out.String())
	}

	// The learner's chapter 2 no longer has the line the patch changes.
	write(t, ws2, "doc.go", "package controller\n\n// mine\n")
	err = ex.start(e3, true, true, &out)
	if err == nil || !strings.Contains(err.Error(), "does not apply to your _exercise/02-finalizer-tracking") || !strings.Contains(err.Error(), "make exercise 3") {
		t.Errorf("start 3 --continue from a chapter 2 the patch does not fit = %v, want what to do", err)
	}
	if _, err := os.Stat(ws3); !os.IsNotExist(err) {
		t.Errorf("a refused start left %s (%v)", ws3, err)
	}
	if data, _ := os.ReadFile(filepath.Join(ws2, "doc.go")); string(data) != "package controller\n\n// mine\n" {
		t.Error("the refused start changed the learner's chapter 2")
	}
}

func TestSections(t *testing.T) {
	got := sections("# Title\n\nintro\n\n## One\n\nfirst\n\n## Two\nsecond\n")
	if want := []string{"One\n\nfirst", "Two\nsecond"}; !slices.Equal(got, want) {
		t.Errorf("sections = %q, want %q", got, want)
	}
}

// A compiler error in a file that the workspace replaces names the
// workspace's file; one in the chapter's tests stays the chapter's.
func TestWorkspacePaths(t *testing.T) {
	rewrite := workspacePaths(&exercise{chapterDir: "chapters/05-rebuild-pods", workspace: "_exercise/05-rebuild-pods"})
	for in, want := range map[string]string{
		"chapters/05-rebuild-pods/redis_controller.go:12:3: undefined: x":      "_exercise/05-rebuild-pods/redis_controller.go:12:3: undefined: x",
		"chapters/05-rebuild-pods/redis_controller_test.go:54:9: undefined: y": "chapters/05-rebuild-pods/redis_controller_test.go:54:9: undefined: y",
		"ok example.com/redis-operator/chapters/05-rebuild-pods":               "ok example.com/redis-operator/chapters/05-rebuild-pods",
	} {
		if got := rewrite(in); got != want {
			t.Errorf("rewrite(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadTestEvents(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Test":"TestA"}`,
		`{"Action":"output","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"output","Test":"TestA/sub","Output":"    a_test.go:9: want 2, got 1\n"}`,
		`{"Action":"fail","Test":"TestA/sub"}`,
		`{"Action":"output","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}`,
		`{"Action":"fail","Test":"TestA"}`,
		`{"Action":"pass","Test":"TestB"}`,
		`{"Action":"output","Output":"FAIL\n"}`,
		`not json`,
	}, "\n")
	results, other := readTestEvents(strings.NewReader(in))
	if r := results["TestA"]; r == nil || r.action != "fail" || !slices.Equal(r.output, []string{"a_test.go:9: want 2, got 1"}) {
		t.Errorf("TestA: %+v", r)
	}
	if r := results["TestB"]; r == nil || r.action != "pass" {
		t.Errorf("TestB: %+v", r)
	}
	if want := []string{"FAIL", "not json"}; !slices.Equal(other, want) {
		t.Errorf("other = %q, want %q", other, want)
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// files lists a directory's files, relative and sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}
