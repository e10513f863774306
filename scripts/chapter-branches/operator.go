package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
)

// The course builds one binary, operator/, that runs any chapter's
// reconciler: --chapter N picks an entry of the registry in
// operator/chapters.go. A branch holds one chapter, so its cmd/main.go is
// operator/main.go with the registry taken out and the chapter's
// reconciler wired in directly, as kubebuilder's cmd/main.go does.
//
// It keeps a --chapter flag that accepts only its own number (see
// checkChapterFunc): the branch's end-to-end suite is the course's suite
// of that chapter, which starts `bin/operator --chapter N` and, in chapter
// 1, checks that another chapter is refused. Keeping the flag keeps the
// suites and their framework the specs that the course proves, rather than
// a second version of them.

// mainDoc is cmd/main.go's package comment.
const mainDoc = `// Command operator runs the Redis operator of one chapter of the course:
// the reconciler of internal/controller in a controller-runtime manager,
// wired as kubebuilder's cmd/main.go wires it. ` + "`make chapter-branches`" + `
// generates this file from the course's operator/main.go, which runs any
// chapter's reconciler (--chapter N); change that file, not this one.`

// checkChapterFunc replaces operator/main.go's findChapter.
const checkChapterFunc = `// checkChapter accepts --chapter for this project's chapter only. A
// kubebuilder project has no such flag; this one keeps it for its
// end-to-end suite, the course's suite of this chapter, unchanged: the
// course runs every chapter's reconciler from one binary, so the suite
// starts ` + "`bin/operator --chapter N`" + `, and chapter 1's suite checks that
// another chapter is refused with the course binary's message. You need
// not pass it.
func checkChapter(n int) error {
	if n != chapterNumber {
		return fmt.Errorf("--chapter must be between %[1]d and %[1]d, got %[2]d: this project is chapter %[1]d alone", chapterNumber, n)
	}
	return nil
}`

// chapterConsts is cmd/main.go's only chapter-specific code.
func chapterConsts(c chapter) string {
	return fmt.Sprintf(`

// The chapter this project is.
const (
	chapterNumber = %d
	chapterSlug   = %q
)`, c.number, c.slug)
}

// registryNames are the identifiers of the course's chapter registry.
// After the rules of operatorMain, none may be left in cmd/main.go.
var registryNames = []string{"chapters", "chapterSetup", "findChapter", "latest", "checkConcurrency"}

// wiring is what a chapter's controller package asks of cmd/main.go, read
// from its source (see chapterWiring).
type wiring struct {
	// cache: the package has CacheOptions, the manager's cache options.
	cache bool
	// concurrent: its SetupWithManager takes the value of
	// --max-concurrent-reconciles.
	concurrent bool
}

// chapterWiring reads chapter c's package (its non-test Go files) for
// func CacheOptions and for the parameters of SetupWithManager.
func chapterWiring(s *source, c chapter) (wiring, error) {
	var w wiring
	setups := 0
	dir := "chapters/" + c.name() + "/"
	for p := range s.files {
		rest, ok := strings.CutPrefix(p, dir)
		if !ok || strings.Contains(rest, "/") || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			continue
		}
		data, err := s.read(p)
		if err != nil {
			return w, err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, data, parser.SkipObjectResolution)
		if err != nil {
			return w, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			switch {
			case fn.Recv == nil && fn.Name.Name == "CacheOptions":
				w.cache = true
			case fn.Recv != nil && fn.Name.Name == "SetupWithManager":
				setups++
				w.concurrent = fn.Type.Params.NumFields() == 2
			}
		}
	}
	if setups != 1 {
		return w, fmt.Errorf("%s: found func (*RedisReconciler) SetupWithManager %d times, want once", dir, setups)
	}
	return w, nil
}

// operatorMain returns chapter c's cmd/main.go, made from the course's
// operator/main.go. Each rule matches once at most, the ones that wire the
// chapter in must match, and no use of the registry may be left over.
func operatorMain(src []byte, module string, c chapter, w wiring) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "operator/main.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	text := func(n ast.Node) string { s, e := span(fset, n); return string(src[s:e]) }
	r := &ruleSet{fset: fset, src: src}

	if f.Doc == nil {
		return nil, fmt.Errorf("operator/main.go has no package comment to replace")
	}
	r.replace("the package comment", f.Doc, mainDoc)
	if len(f.Decls) == 0 {
		return nil, fmt.Errorf("operator/main.go declares nothing")
	}
	last := f.Decls[0]
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			last = d
		}
	}
	_, end := span(fset, last)
	r.add("the chapter constants", end, end, chapterConsts(c))

	var chapterVar string // ch in `ch, err := findChapter(chapter)`
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil {
			continue
		}
		switch fn.Name.Name {
		case "findChapter":
			r.replace("func findChapter", fn, checkChapterFunc)
		case "checkConcurrency":
			r.delete("func checkConcurrency", fn)
		case "run":
			for i, stmt := range fn.Body.List {
				switch {
				case isAssignTo(stmt, "maxConcurrentReconciles"):
					if !w.concurrent {
						r.delete("maxConcurrentReconciles := flag.Int(...)", stmt)
					}
				case isIfCallOf(stmt, "checkConcurrency"):
					// if err := checkConcurrency(ch, *n); err != nil {
					n := text(stmt.(*ast.IfStmt).Init.(*ast.AssignStmt).Rhs[0].(*ast.CallExpr).Args[1])
					if w.concurrent {
						r.replace("if err := checkConcurrency(...)", stmt, fmt.Sprintf(
							"if %[1]s < 1 {\n\t\treturn fmt.Errorf(\"--max-concurrent-reconciles must be at least 1, got %%d\", %[1]s)\n\t}", n))
					} else {
						r.delete("if err := checkConcurrency(...)", stmt)
					}
				case isAssignTo(stmt, "latest"):
					r.delete("latest := <the last chapter>", stmt)
				case isAssignTo(stmt, "flag.Usage"):
					r.delete("flag.Usage = <a usage that lists the chapters>", stmt)
				case isFlagVar(stmt, "chapter"):
					ptr := stmt.(*ast.ExprStmt).X.(*ast.CallExpr).Args[0]
					r.replace(`flag.IntVar(..., "chapter", ...)`, stmt, fmt.Sprintf(
						"flag.IntVar(%s, \"chapter\", chapterNumber, \"this project's chapter, the only one accepted (its end-to-end suite passes it)\")", text(ptr)))
				case isCallOf(stmt, "findChapter"):
					// ch, err := findChapter(chapter)
					// if err != nil {
					a := stmt.(*ast.AssignStmt)
					chapterVar = a.Lhs[0].(*ast.Ident).Name
					errVar := text(a.Lhs[1])
					check, ok := fn.Body.List[min(i+1, len(fn.Body.List)-1)].(*ast.IfStmt)
					if !ok || check.Init != nil || text(check.Cond) != errVar+" != nil" {
						return nil, fmt.Errorf("operator/main.go: findChapter's error is not checked right after the call")
					}
					start, _ := span(fset, stmt)
					_, end := span(fset, check.Cond)
					r.add("ch, err := findChapter(chapter); if err != nil", start, end, fmt.Sprintf(
						"if %s := checkChapter(%s); %s", errVar, text(a.Rhs[0].(*ast.CallExpr).Args[0]), text(check.Cond)))
				}
			}
		}
	}
	if chapterVar == "" {
		return nil, fmt.Errorf("operator/main.go: no `ch, err := findChapter(chapter)` in run")
	}
	// if ch.cache != nil { opts.Cache = ch.cache() }
	ast.Inspect(f, func(n ast.Node) bool {
		stmt, ok := n.(*ast.IfStmt)
		if !ok || stmt.Init != nil || text(stmt.Cond) != chapterVar+".cache != nil" {
			return true
		}
		if !w.cache {
			r.delete("if ch.cache != nil", stmt)
			return false
		}
		if len(stmt.Body.List) != 1 {
			return true // left for leftovers to report
		}
		set, ok := stmt.Body.List[0].(*ast.AssignStmt)
		if !ok {
			return true
		}
		r.replace("if ch.cache != nil", stmt, text(set.Lhs[0])+" = controller.CacheOptions()")
		return false
	})
	// The chosen chapter's fields and setup call become this chapter's.
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil || r.covered(n) {
			return false
		}
		switch n := n.(type) {
		case *ast.CallExpr:
			if isSelector(n.Fun, chapterVar, "setup") && len(n.Args) == 2 {
				args := text(n.Args[0])
				if w.concurrent {
					args += ", " + text(n.Args[1])
				}
				r.replace("ch.setup(mgr, n)", n, fmt.Sprintf("controller.NewRedisReconciler(%s).SetupWithManager(%s)", text(n.Args[0]), args))
				return false
			}
		case *ast.SelectorExpr:
			switch {
			case isSelector(n, chapterVar, "number"):
				r.replaceAny("ch.number", n, "chapterNumber")
			case isSelector(n, chapterVar, "slug"):
				r.replaceAny("ch.slug", n, "chapterSlug")
			}
		}
		return true
	})
	if err := r.leftovers(f, append(slices.Clone(registryNames), chapterVar)); err != nil {
		return nil, err
	}
	out, err := r.apply("func findChapter", "ch, err := findChapter(chapter); if err != nil", "ch.setup(mgr, n)", `flag.IntVar(..., "chapter", ...)`,
		"func checkConcurrency", "if err := checkConcurrency(...)", "if ch.cache != nil")
	if err != nil {
		return nil, fmt.Errorf("operator/main.go: %w", err)
	}
	return addImport(out, module+"/internal/controller", module)
}

// ruleSet collects the edits of named rules and counts their matches.
type ruleSet struct {
	fset  *token.FileSet
	src   []byte
	edits []edit
	count map[string]int
	// any names the rules that may match any number of times.
	any map[string]bool
}

func (r *ruleSet) add(rule string, start, end int, text string) {
	if r.count == nil {
		r.count, r.any = map[string]int{}, map[string]bool{}
	}
	r.count[rule]++
	r.edits = append(r.edits, edit{start, end, text})
}

func (r *ruleSet) replace(rule string, n ast.Node, text string) {
	s, e := span(r.fset, n)
	r.add(rule, s, e, text)
}

func (r *ruleSet) replaceAny(rule string, n ast.Node, text string) {
	r.replace(rule, n, text)
	r.any[rule] = true
}

func (r *ruleSet) delete(rule string, n ast.Node) {
	s, e := span(r.fset, n)
	s, e = lines(r.src, s, e)
	r.add(rule, s, e, "")
}

// covered reports whether an edit already replaces n.
func (r *ruleSet) covered(n ast.Node) bool {
	s, e := span(r.fset, n)
	for _, ed := range r.edits {
		if ed.start <= s && e <= ed.end && ed.start < ed.end {
			return true
		}
	}
	return false
}

// leftovers fails for an identifier in names that no edit removes: a use
// of the registry that the rules do not know.
func (r *ruleSet) leftovers(f *ast.File, names []string) error {
	var err error
	ast.Inspect(f, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if ok && err == nil && slices.Contains(names, id.Name) && !r.covered(id) {
			err = fmt.Errorf("%s: %s is used where scripts/chapter-branches has no rule for it", r.fset.Position(id.Pos()), id.Name)
		}
		return err == nil
	})
	return err
}

// apply checks that each rule matched once at most (any number of times
// for replaceAny) and each of must at least once, and applies the edits.
func (r *ruleSet) apply(must ...string) ([]byte, error) {
	for rule, n := range r.count {
		if n > 1 && !r.any[rule] {
			return nil, fmt.Errorf("rule %q matched %d times, want once", rule, n)
		}
	}
	for _, rule := range must {
		if r.count[rule] == 0 {
			return nil, fmt.Errorf("rule %q matched nothing: the file changed shape, and scripts/chapter-branches must follow", rule)
		}
	}
	return splice(r.src, r.edits)
}

// isAssignTo reports whether stmt assigns to the expression lhs (an
// identifier or pkg.Name).
func isAssignTo(stmt ast.Stmt, lhs string) bool {
	a, ok := stmt.(*ast.AssignStmt)
	if !ok || len(a.Lhs) != 1 {
		return false
	}
	pkg, name, qualified := strings.Cut(lhs, ".")
	if qualified {
		return isSelector(a.Lhs[0], pkg, name)
	}
	id, ok := a.Lhs[0].(*ast.Ident)
	return ok && id.Name == lhs
}

// isFlagVar reports whether stmt is flag.XxxVar(ptr, "name", ...).
func isFlagVar(stmt ast.Stmt, name string) bool {
	e, ok := stmt.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := e.X.(*ast.CallExpr)
	if !ok || len(call.Args) < 2 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	lit, isLit := call.Args[1].(*ast.BasicLit)
	return ok && isSelector(sel, "flag", sel.Sel.Name) && strings.HasSuffix(sel.Sel.Name, "Var") &&
		isLit && lit.Value == `"`+name+`"`
}

// isIfCallOf reports whether stmt is `if err := fn(...); ...`.
func isIfCallOf(stmt ast.Stmt, fn string) bool {
	s, ok := stmt.(*ast.IfStmt)
	if !ok {
		return false
	}
	a, ok := s.Init.(*ast.AssignStmt)
	if !ok || len(a.Rhs) != 1 {
		return false
	}
	call, ok := a.Rhs[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 2 {
		return false
	}
	id, ok := call.Fun.(*ast.Ident)
	return ok && id.Name == fn
}

// isCallOf reports whether stmt is `a, b := fn(x)`.
func isCallOf(stmt ast.Stmt, fn string) bool {
	a, ok := stmt.(*ast.AssignStmt)
	if !ok || len(a.Lhs) != 2 || len(a.Rhs) != 1 {
		return false
	}
	call, ok := a.Rhs[0].(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	id, ok := call.Fun.(*ast.Ident)
	_, lhsIdent := a.Lhs[0].(*ast.Ident)
	return ok && id.Name == fn && lhsIdent
}

// isSelector reports whether e is x.sel.
func isSelector(e ast.Expr, x, sel string) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok || s.Sel.Name != sel {
		return false
	}
	id, ok := s.X.(*ast.Ident)
	return ok && id.Name == x
}

// chapterRoleFunc replaces the framework's ChapterRole, which finds chapter
// n's role in chapters/NN-slug/.
const chapterRoleFunc = `// ChapterRole is the RBAC role generated from the controller's markers,
// config/rbac/role.yaml (` + "`make manifests`" + `). This project is one chapter,
// so it has one role, whatever n; the course repository, which holds
// every chapter, has one per chapter.
func ChapterRole(root string, _ int) (string, error) {
	role := filepath.Join(root, "config", "rbac", "role.yaml")
	if _, err := os.Stat(role); err != nil {
		return "", fmt.Errorf("no generated role (%w); ` + "`make manifests`" + ` writes it", err)
	}
	return role, nil
}`

// frameworkRewrites adapts the suites' framework (tests/framework) to a
// branch's layout: the role is config/rbac/role.yaml, the operator is built
// from ./cmd, and the suite runs with make test-e2e. It counts what it
// changed over all the framework's files, for check.
type frameworkRewrites struct {
	chapterRole, operatorPackage int
}

func (fw *frameworkRewrites) apply(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	r := &ruleSet{fset: fset, src: src}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "ChapterRole" {
			r.replace("func ChapterRole", fn, chapterRoleFunc)
			fw.chapterRole++
		}
	}
	var err2 error
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || r.covered(lit) {
			return true
		}
		v := strings.ReplaceAll(lit.Value, "make test-chapter N", "make test-e2e")
		if strings.Contains(v, "./operator") {
			v = strings.ReplaceAll(v, "./operator", "./cmd")
			fw.operatorPackage++
		}
		if strings.Contains(v, "chapters/") || strings.Contains(v, `"chapters"`) {
			err2 = fmt.Errorf("%s: %s points into the course's chapters/, which a branch does not have", fset.Position(lit.Pos()), lit.Value)
		}
		if v != lit.Value {
			r.replaceAny("a string that names the course's layout", lit, v)
		}
		return true
	})
	if err2 != nil {
		return nil, err2
	}
	if len(r.edits) == 0 {
		return src, nil
	}
	return r.apply()
}

// check fails when a rule found nothing: the framework changed shape, and
// the rules must follow.
func (fw *frameworkRewrites) check() error {
	if fw.chapterRole != 1 {
		return fmt.Errorf("tests/framework: found func ChapterRole %d times, want once", fw.chapterRole)
	}
	if fw.operatorPackage == 0 {
		return fmt.Errorf(`tests/framework: no string names the operator's package "./operator"`)
	}
	return nil
}
