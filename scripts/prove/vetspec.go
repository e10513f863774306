package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// A learner's spec is compiled into the chapter's suite, so it could do
// what proves nothing: call the chapter's own spec, which carries its own
// lesson step and deciding checks; decide by which chapter or build it
// runs against; or hold deciding checks that assert nothing. vetSpec
// refuses those before any run. It judges what the code does, not how it
// spells it: the suite's package is type-checked with the learner's files
// in it, and every name they use is resolved to what it denotes, so a
// dot-import, an alias or a shadowing name changes nothing. The learner's
// files are the spec and any file of the suite's directory that git does
// not hold as the course has it: each is compiled in, so each is vetted.

const (
	modulePath   = "example.com/redis-operator"
	frameworkPkg = modulePath + "/tests/framework"
)

// specImports are the packages a learner's spec may import: the
// framework and what its primitives take and return.
var specImports = []*regexp.Regexp{
	regexp.MustCompile(`^(context|errors|fmt|maps|slices|strings|syscall|time)$`),
	regexp.MustCompile(`^github\.com/onsi/(ginkgo/v2|gomega)(/.*)?$`),
	regexp.MustCompile(`^example\.com/redis-operator/(tests/framework|api/v1|operator/faults)$`),
	regexp.MustCompile(`^k8s\.io/(api|apimachinery)/`),
	regexp.MustCompile(`^sigs\.k8s\.io/controller-runtime/pkg/client$`),
}

// revealing are the framework's names through which a spec would learn
// which chapter or which build of the operator it runs against.
var revealing = map[string]bool{
	"Chapter": true, "Binary": true, "OperatorBinary": true, "FaultsBinary": true,
	"RepoRoot": true, "OutputDir": true,
}

// revealingText are the environment's names for the same.
var revealingText = regexp.MustCompile(`OPERATOR_(CHAPTER|BIN|FAULTS_BIN|ROLE)|VARIANT`)

// environment are the functions of the allowed packages that read the
// process's environment.
var environment = map[string]bool{"syscall.Getenv": true, "syscall.Environ": true}

// matchers are Gomega's methods that assert: an Expect or an Eventually
// without one of them asserts nothing.
var matchers = map[string]bool{"To": true, "ToNot": true, "NotTo": true, "Should": true, "ShouldNot": true}

// vetSpec returns what makes the learner's spec file unable to prove
// anything, or nil. suiteDir is the chapter's suite (its package holds
// the file), frameworkDir the framework's.
func vetSpec(file, suiteDir, frameworkDir string) ([]string, error) {
	bodies, err := specBodies(frameworkDir)
	if err != nil {
		return nil, err
	}
	pkg, learners, err := loadWithSpec(file, suiteDir)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, f := range pkg.Syntax {
		name := pkg.Fset.Position(f.Pos()).Filename
		if !learners[name] {
			continue
		}
		shown := name
		if filepath.Base(name) == exerciseFile {
			shown = file
		}
		say := func(n ast.Node, format string, args ...any) {
			pos := pkg.Fset.Position(n.Pos())
			problems = append(problems, fmt.Sprintf("%s:%d:%d: %s", shown, pos.Line, pos.Column, fmt.Sprintf(format, args...)))
		}
		vetFile(f, pkg, learners, bodies, say)
	}
	slices.Sort(problems)
	return slices.Compact(problems), nil
}

func vetFile(f *ast.File, pkg *packages.Package, learners map[string]bool, bodies map[string]bool, say func(ast.Node, string, ...any)) {
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !slices.ContainsFunc(specImports, func(re *regexp.Regexp) bool { return re.MatchString(path) }) {
			say(imp, "imports %s: a spec sees the cluster and the operator through the framework (tests/framework), the API's types and Gomega", path)
		}
	}
	info := pkg.TypesInfo
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING && revealingText.MatchString(x.Value) {
				say(x, "names %s: a spec that decides by which chapter or build it runs against proves nothing", revealingText.FindString(x.Value))
			}
		case *ast.Ident:
			obj := info.Uses[x]
			if obj == nil || obj.Pkg() == nil {
				return true
			}
			switch from := obj.Pkg().Path(); {
			case from == frameworkPkg && revealing[obj.Name()]:
				say(x, "reads %s, which says which chapter or build it runs against: a spec that decides by it proves nothing", obj.Name())
			case from == frameworkPkg && bodies[obj.Name()]:
				say(x, "calls %s, one of the framework's specs (it marks a lesson step or holds a deciding check of its own): write the steps and checks yourself", obj.Name())
			case environment[from+"."+obj.Name()]:
				say(x, "reads the environment (%s.%s): a spec that decides by how it was started proves nothing", from, obj.Name())
			case obj.Pkg() == pkg.Types && obj.Parent() == pkg.Types.Scope() && obj.Name() != "env" && !learners[pkg.Fset.Position(obj.Pos()).Filename]:
				say(x, "uses %s, the chapter's own (%s): write the steps and checks yourself, with env and the framework", obj.Name(), filepath.Base(filepath.Dir(pkg.Fset.Position(obj.Pos()).Filename)))
			}
		case *ast.CallExpr:
			if isFramework(info, x.Fun, "DecidingCheck") && len(x.Args) == 2 && !asserts(info, x.Args[1]) {
				say(x, "its deciding check asserts nothing: make the assertion that decides inside it (an Expect, Eventually or Consistently with a matcher)")
			}
		}
		return true
	})
}

// loadWithSpec type-checks the suite's package, built as its tests are
// (tag e2e), with file in it as the exercise file, and returns it with
// the names of the learner's files in it.
func loadWithSpec(file, suiteDir string) (*packages.Package, map[string]bool, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	dir, err := filepath.Abs(suiteDir)
	if err != nil {
		return nil, nil, err
	}
	spec := filepath.Join(dir, exerciseFile)
	learners := map[string]bool{spec: true}
	changed, err := changedFiles(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range changed {
		learners[c] = true
	}
	cfg := &packages.Config{
		Mode:       packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports,
		Dir:        dir,
		Tests:      true,
		BuildFlags: []string{"-tags=e2e"},
		Overlay:    map[string][]byte{spec: src},
	}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		return nil, nil, err
	}
	for _, p := range pkgs {
		if !slices.Contains(p.CompiledGoFiles, spec) {
			continue
		}
		if len(p.Errors) > 0 {
			var msgs []string
			for _, e := range p.Errors {
				msgs = append(msgs, strings.ReplaceAll(e.Error(), spec, file))
			}
			return nil, nil, fmt.Errorf("your spec %s does not compile with the suite:\n  %s", file, strings.Join(msgs, "\n  "))
		}
		return p, learners, nil
	}
	return nil, nil, fmt.Errorf("the suite %s did not load with your spec in it", suiteDir)
}

// changedFiles are the Go files of dir that git does not hold as the
// course has them: new, or changed. The suite compiles them in, so they
// are the learner's too.
func changedFiles(dir string) ([]string, error) {
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=all", "--ignored=matching", "--", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("cannot tell your files in %s from the course's (git status: %v): make check-spec needs the course's git checkout", dir, err)
	}
	top, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return nil, fmt.Errorf("cannot find the checkout of %s: %v", dir, err)
	}
	var files []string
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) < 4 || !strings.HasSuffix(line, ".go") {
			continue
		}
		path := line[3:]
		if _, to, renamed := strings.Cut(path, " -> "); renamed {
			path = to
		}
		files = append(files, filepath.Join(strings.TrimSpace(string(top)), path))
	}
	return files, nil
}

// specBodies are the framework's functions and methods that are specs:
// those that mark a lesson step (LessonStep) or hold a deciding check
// (DecidingCheck), those that declare specs (…Spec, as Describe does),
// and those that call one of them.
func specBodies(dir string) (map[string]bool, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	calls := map[string][]string{}
	names := map[string]bool{}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			if fn.Name.IsExported() && strings.HasSuffix(name, "Spec") {
				names[name] = true
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					callee := calleeName(c)
					if callee == "LessonStep" || callee == "DecidingCheck" {
						names[name] = true
					}
					calls[name] = append(calls[name], callee)
				}
				return true
			})
		}
	}
	for grew := true; grew; {
		grew = false
		for caller, callees := range calls {
			if !names[caller] && slices.ContainsFunc(callees, func(c string) bool { return names[c] }) {
				names[caller], grew = true, true
			}
		}
	}
	delete(names, "LessonStep")
	delete(names, "DecidingCheck")
	return names, nil
}

func calleeName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	case *ast.IndexExpr: // a generic call
		if s, ok := f.X.(*ast.SelectorExpr); ok {
			return s.Sel.Name
		}
	}
	return ""
}

// callee is the function or method a call's expression denotes.
func callee(info *types.Info, fun ast.Expr) types.Object {
	switch f := ast.Unparen(fun).(type) {
	case *ast.Ident:
		return info.Uses[f]
	case *ast.SelectorExpr:
		return info.Uses[f.Sel]
	case *ast.IndexExpr:
		return callee(info, f.X)
	case *ast.IndexListExpr:
		return callee(info, f.X)
	}
	return nil
}

// isFramework: fun denotes the framework's function name.
func isFramework(info *types.Info, fun ast.Expr, name string) bool {
	obj := callee(info, fun)
	return obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == frameworkPkg && obj.Name() == name
}

// asserts: the function literal holds an assertion: one of Gomega's
// matcher methods called, or a framework function or method that
// expects (env.ExpectRebuilt, RunScenario).
func asserts(info *types.Info, fn ast.Expr) bool {
	found := false
	ast.Inspect(fn, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		obj := callee(info, c.Fun)
		if obj == nil || obj.Pkg() == nil {
			return !found
		}
		from := obj.Pkg().Path()
		switch {
		case strings.HasPrefix(from, "github.com/onsi/gomega") && matchers[obj.Name()]:
			found = true
		case from == frameworkPkg && (strings.HasPrefix(obj.Name(), "Expect") || obj.Name() == "RunScenario"):
			found = true
		}
		return !found
	})
	return found
}
