package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"example.com/redis-operator/chapters"
)

// A spec that says something must not happen passes as long as nothing
// happens, for any reason: only a bug that makes it happen, a mutant,
// shows that the spec can see it. Every such spec has a mutant in some
// chapter's mutants/, or a reason here why none can be written.
var noMutant = map[string]string{
	"A pod deleted with kubectl comes back also when deleted together with others, without a reconcile error by label": "" +
		"an entry of the table whose entry by name kills terminating-is-an-error (chapter 5): the same body and checks, reached by another kubectl command",
	"A pod deleted with kubectl comes back also when deleted together with others, without a reconcile error forced, without grace period": "" +
		"pods deleted with --force go at once, with no Terminating state for a mutant to trip on; the entry is a lesson spec, red against chapter 4",
	"A webhook that hangs holds a create for its timeoutSeconds, no more, and then lets it through (failurePolicy Ignore)": "" +
		"its bound is the lesson's 5 s, which the spec also finds in the deployed configuration; that configuration is the chapter's manifests.yaml, which a mutant of the chapter's Go files does not change",
	"The operator's credentials are a projected, expiring ServiceAccount token that the kubelet mounts, not a Secret": "" +
		"it checks the Deployment of config/manager and the operator's namespace, which no mutant of a chapter's package can change",
	"Three replicas of the operator with leader election elect one leader, which reconciles; the two others wait for the Lease, and reconcile nothing": "" +
		"a spec of the framework's own suite (tests/replicas, make test-replicas), which no chapter's mutants run; broken once on purpose: with the replicas started without --leader-elect, it fails",
	"Three replicas of the operator with leader election sees exactly the replica that dies: one killed on purpose is no death, one that exits unasked is, and only it": "" +
		"a spec of the framework's own suite (tests/replicas), about the framework's death check, which no chapter's mutant changes; broken once on purpose: with the unasked exit left out of Replicas.Deaths, it fails",
	"bin/operator says so when no API server answers": "" +
		"the message is operator/main.go's, which no chapter's package holds",
}

// mustNot is how a spec's text says that something must not happen.
var mustNot = regexp.MustCompile(`(?i)\b(not|never|no|nothing|without|refused|refuses|only)\b|n't`)

func TestEveryMustNotSpecHasAMutant(t *testing.T) {
	killed := map[string]bool{}
	paths, _ := filepath.Glob("../../chapters/*/mutants/*.patch")
	for _, p := range paths {
		m, err := chapters.ParseMutant(p)
		if err != nil {
			t.Fatal(err)
		}
		killed[m.Spec] = true
	}
	texts := specTexts(t, "../../tests")
	if len(texts) < 50 {
		t.Fatalf("found %d spec texts in tests/: the parser misses Ginkgo's containers", len(texts))
	}
	for _, text := range texts {
		reason, excused := noMutant[text]
		switch {
		case !mustNot.MatchString(text):
		case killed[text] && excused:
			t.Errorf("%q has a mutant now: drop its reason, %q", text, reason)
		case !killed[text] && !excused:
			t.Errorf("%q says that something must not happen, and no mutant shows that it can see it: write one (chapters/NN-slug/mutants), or say why none can be, in noMutant", text)
		}
	}
	for text := range noMutant {
		if !slices.Contains(texts, text) {
			t.Errorf("noMutant names %q, which no spec is", text)
		}
	}
}

// specTexts lists the full text of every spec in the Go files under dir:
// the texts of its containers (Describe, Context, When, DescribeTable)
// and its own (It, Specify, Entry), as Ginkgo joins them, where each is a
// string literal.
func specTexts(t *testing.T, dir string) []string {
	t.Helper()
	var texts []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		collectSpecs(f, nil, &texts)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(texts)
	return slices.Compact(texts)
}

var (
	specContainers = map[string]bool{"Describe": true, "Context": true, "When": true, "DescribeTable": true}
	specLeaves     = map[string]bool{"It": true, "Specify": true, "Entry": true}
)

func collectSpecs(n ast.Node, prefix []string, texts *[]string) {
	ast.Inspect(n, func(x ast.Node) bool {
		call, ok := x.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		var fn string
		switch f := call.Fun.(type) {
		case *ast.Ident:
			fn = f.Name
		case *ast.SelectorExpr:
			fn = f.Sel.Name
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || !specContainers[fn] && !specLeaves[fn] {
			return true
		}
		text, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		path := append(slices.Clip(prefix), text)
		if specLeaves[fn] {
			*texts = append(*texts, strings.Join(path, " "))
			return false
		}
		for _, arg := range call.Args[1:] {
			collectSpecs(arg, path, texts)
		}
		return false
	})
}
