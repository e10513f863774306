package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A learner's spec is compiled into the chapter's suite, so it could do
// what proves nothing: call the chapter's own spec, which carries its own
// lesson step and deciding checks; decide by which chapter or build it
// runs against; or hold deciding checks that assert nothing. vetSpec
// refuses those before any run, reading the file.

// specImports are the packages a learner's spec may import: the
// framework and what its primitives take and return.
var specImports = []*regexp.Regexp{
	regexp.MustCompile(`^(context|errors|fmt|maps|slices|strings|syscall|time)$`),
	regexp.MustCompile(`^github\.com/onsi/(ginkgo/v2|gomega)(/.*)?$`),
	regexp.MustCompile(`^example\.com/redis-operator/(tests/framework|api/v1|operator/faults)$`),
	regexp.MustCompile(`^k8s\.io/(api|apimachinery)/`),
	regexp.MustCompile(`^sigs\.k8s\.io/controller-runtime/pkg/client$`),
}

// revealing are the names through which a spec would learn which chapter
// or which build of the operator it runs against.
var revealing = map[string]bool{
	"Chapter": true, "Binary": true, "OperatorBinary": true, "FaultsBinary": true,
	"RepoRoot": true, "OutputDir": true,
}

// revealingText are the environment's names for the same.
var revealingText = regexp.MustCompile(`OPERATOR_(CHAPTER|BIN|FAULTS_BIN|ROLE)|VARIANT`)

// assertion is a call that asserts something: Gomega's, or a framework
// primitive that expects (env.ExpectRebuilt, RunScenario).
var assertion = regexp.MustCompile(`^(Expect|Eventually|Consistently|Ω|RunScenario)`)

// vetSpec returns what makes the learner's spec file unable to prove
// anything, or nil. suiteDir is the chapter's suite (its package holds
// the file), frameworkDir the framework's.
func vetSpec(file, suiteDir, frameworkDir string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	own, err := suiteDeclarations(suiteDir)
	if err != nil {
		return nil, err
	}
	bodies, err := specBodies(frameworkDir)
	if err != nil {
		return nil, err
	}
	declared := definedNames(f)
	var problems []string
	say := func(n ast.Node, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !slices.ContainsFunc(specImports, func(re *regexp.Regexp) bool { return re.MatchString(path) }) {
			say(imp, "imports %s: a spec sees the cluster and the operator through the framework (tests/framework), the API's types and Gomega", path)
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING && revealingText.MatchString(x.Value) {
				say(x, "names %s: a spec that decides by which chapter or build it runs against proves nothing", revealingText.FindString(x.Value))
			}
		case *ast.SelectorExpr:
			switch {
			case revealing[x.Sel.Name]:
				say(x, "reads %s, which says which chapter or build it runs against: a spec that decides by it proves nothing", x.Sel.Name)
			case bodies[x.Sel.Name]:
				say(x, "calls %s, one of the framework's specs (it marks a lesson step of its own): write the steps and checks yourself", x.Sel.Name)
			}
		case *ast.Ident:
			if own[x.Name] && !declared[x.Name] {
				say(x, "uses %s, the chapter's own (%s): write the steps and checks yourself, with env and the framework", x.Name, suiteDir)
			}
		case *ast.CallExpr:
			if name := calleeName(x); name == "DecidingCheck" && len(x.Args) == 2 && !asserts(x.Args[1]) {
				say(x, "its deciding check asserts nothing: make the assertion that decides inside it")
			}
		}
		return true
	})
	slices.Sort(problems)
	return slices.Compact(problems), nil
}

// suiteDeclarations are the top-level names of the suite's own files, but
// env, which a learner's spec is meant to use.
func suiteDeclarations(dir string) (map[string]bool, error) {
	files, err := parseDir(dir, func(path string) bool { return filepath.Base(path) != exerciseFile })
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			for _, n := range declNames(d) {
				names[n] = n != "env" && n != "_"
			}
		}
	}
	return names, nil
}

// specBodies are the framework's functions and methods that are specs:
// those that mark a lesson step (LessonStep), and those that declare
// specs (…Spec, returning bool, as Describe does).
func specBodies(dir string) (map[string]bool, error) {
	files, err := parseDir(dir, func(path string) bool { return !strings.HasSuffix(path, "_test.go") })
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !fn.Name.IsExported() {
				continue
			}
			if strings.HasSuffix(fn.Name.Name, "Spec") {
				names[fn.Name.Name] = true
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok && calleeName(c) == "LessonStep" {
					names[fn.Name.Name] = true
				}
				return true
			})
		}
	}
	delete(names, "LessonStep")
	return names, nil
}

// parseDir parses the Go files of dir that keep wants.
func parseDir(dir string, keep func(path string) bool) ([]*ast.File, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, path := range paths {
		if !keep(path) {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// definedNames are the names the file defines itself, at the top or
// inside its functions: a variable of the learner's that happens to share
// a name with one of the suite's is the learner's.
func definedNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, d := range f.Decls {
		for _, n := range declNames(d) {
			names[n] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						names[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range x.Names {
				names[id.Name] = true
			}
		case *ast.Field:
			for _, id := range x.Names {
				names[id.Name] = true
			}
		case *ast.RangeStmt:
			if x.Tok == token.DEFINE {
				for _, e := range []ast.Expr{x.Key, x.Value} {
					if id, ok := e.(*ast.Ident); ok {
						names[id.Name] = true
					}
				}
			}
		}
		return true
	})
	return names
}

func declNames(d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			names = append(names, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			}
		}
	}
	return names
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

// asserts: the function literal holds an assertion.
func asserts(fn ast.Expr) bool {
	found := false
	ast.Inspect(fn, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok && assertion.MatchString(calleeName(c)) {
			found = true
		}
		return !found
	})
	return found
}
