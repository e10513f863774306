package main

import (
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"

	"example.com/redis-operator/chapters"
)

// A chapter's branch is the course repository reduced to that chapter, in
// kubebuilder's layout. pathRules says where each file of the course goes;
// the first rule whose from is the file or one of its directories wins,
// and a file no rule names is not in the branch (the other chapters, the
// course's operator/controller that runs any of them, scripts/prove, .ci,
// the course README). Kept files are copied byte for byte unless transform
// changes them, so that a file that is the same in every chapter is the
// same blob in every branch: cmd/main.go (the course's operator/main.go,
// its import of the chapters' table pointed at internal/controller) is
// one of them.
func pathRules(c chapter) []pathRule {
	const drop = ""
	return []pathRule{
		{from: c.Dir() + "/README.md", to: "README.md"},
		{from: c.Dir() + "/README.zh-CN.md", to: "README.zh-CN.md"},
		{from: c.Dir() + "/role.yaml", to: "config/rbac/role.yaml"},
		{from: c.Dir() + "/manifests.yaml", to: "config/webhook/manifests.yaml"},
		// A chapter's crd/ is config/crd with its patches (chapter 11 on).
		{from: c.Dir() + "/crd", to: "config/crd"},
		// Its mutants run against the course's operator (make mutants), and
		// its exercise in the course's workspace (make exercise).
		{from: c.Dir() + "/mutants", to: drop},
		{from: c.Dir() + "/exercise", to: drop},
		{from: c.Dir(), to: "internal/controller"},
		{from: chapters.SuiteDir(c.Number), to: "test/e2e"},
		// The framework's parts about what a chapter of the table needs
		// come with the first chapter that needs it: the deployed
		// operator (its webhook, its Lease) and the test build with faults.
		{from: "tests/framework/deployed.go", to: "test/e2e/framework/deployed.go", since: inClusterChapter},
		{from: "tests/framework/webhook.go", to: "test/e2e/framework/webhook.go", since: inClusterChapter},
		{from: "tests/framework/leasewatch.go", to: "test/e2e/framework/leasewatch.go", since: inClusterChapter},
		{from: "tests/framework/leasewatch_test.go", to: "test/e2e/framework/leasewatch_test.go", since: inClusterChapter},
		{from: "tests/framework/faults.go", to: "test/e2e/framework/faults.go", since: faultsChapter},
		{from: "tests/framework/scenario.go", to: "test/e2e/framework/scenario.go", since: faultsChapter},
		{from: "tests/framework/scenario_test.go", to: "test/e2e/framework/scenario_test.go", since: faultsChapter},
		// The check of the framework's behaviour specs against the whole
		// table, which a branch does not have.
		{from: "tests/framework/behaviour_test.go", to: drop},
		{from: "tests/framework", to: "test/e2e/framework"},
		// What the unit tests stand on.
		{from: "tests/fakeapi", to: "test/fakeapi"},
		// What the tools and the suites both stand on; not the course's
		// test of the local cluster itself (make test-local-cluster).
		{from: "internal/cluster/localcluster/updown_e2e_test.go", to: drop},
		{from: "internal/makefile", to: drop}, // the course's checks of its Makefiles
		{from: "internal", to: "internal"},
		{from: "operator/controller", to: drop}, // the course's table; the chapter's package is internal/controller
		// The suite protocol without the table: a branch is one chapter.
		{from: "chapters/protocol.go", to: "internal/chapters/protocol.go"},
		// The fault injection of the operator's test build comes with the
		// chapter whose suite runs it.
		{from: "operator/faults.go", to: "cmd/faults.go", since: faultsChapter},
		{from: "operator/faults", to: "internal/faults", since: faultsChapter},
		{from: "operator/trace", to: "internal/trace"},
		{from: "operator", to: "cmd"},
		{from: "config/rbac/role.yaml", to: drop},                                  // the chapter's role replaces it
		{from: "config/webhook/manifests.yaml", to: drop},                          // and its webhook configuration
		{from: "config/crd/kustomization.yaml", to: drop, since: admissionChapter}, // and its crd/
		// What runs the operator in the cluster comes with chapter 10.
		{from: "config/rbac", to: "config/rbac", since: inClusterChapter},
		{from: "config/default", to: "config/default", since: inClusterChapter},
		{from: "config/manager", to: "config/manager", since: inClusterChapter},
		{from: "scripts/image", to: "scripts/image", since: inClusterChapter},
		{from: "scripts/deploy.mk", to: "scripts/deploy.mk", since: inClusterChapter},
		{from: "scripts/deploy/webhook_test.go", to: "scripts/deploy/webhook_test.go", since: admissionChapter},
		{from: "scripts/deploy", to: "scripts/deploy", since: inClusterChapter},
		// The webhook and its certificates come with chapter 11.
		{from: "config/webhook", to: "config/webhook", since: admissionChapter},
		{from: "scripts/certs", to: "scripts/certs", since: admissionChapter},
		{from: "api", to: "api"},
		{from: "config", to: "config"},
		{from: ".gitignore", to: ".gitignore"},
		{from: ".golangci.yml", to: ".golangci.yml"},
		{from: "go.mod", to: "go.mod"},
		{from: "go.sum", to: "go.sum"},
		{from: "scripts/build-kubernetes.sh", to: "scripts/build-kubernetes.sh"},
		{from: "scripts/common.mk", to: "scripts/common.mk"},
		{from: "scripts/cluster", to: "scripts/cluster"},
		{from: "scripts/kind-node-image", to: "scripts/kind-node-image"},
	}
}

// pathRule maps a file or directory of the course (from) to its place in
// a branch (to; empty: not in the branch), in the branches of chapter
// since on (0: every branch). A rule that drops from a chapter on does
// not apply to the branches before it: the next rule that matches does.
type pathRule struct {
	from, to string
	since    int
}

// The first chapters, in the table of chapters, that run the operator in
// the cluster (their manifests, image and make deploy are in their branch
// and those after), that serve the webhook (its certificates and a CRD of
// their own), and that inject faults.
var (
	inClusterChapter = firstWith(func(c chapters.Chapter) bool { return c.InCluster })
	admissionChapter = firstWith(func(c chapters.Chapter) bool { return c.Webhook })
	faultsChapter    = firstWith(func(c chapters.Chapter) bool { return c.Faults })
)

// firstWith is the number of the first chapter that has what has asks for;
// past every chapter if none has.
func firstWith(has func(chapters.Chapter) bool) int {
	if c, ok := chapters.First(has); ok {
		return c.Number
	}
	return math.MaxInt
}

// rewritten returns the chapter that chapter n rewrites (the table's
// Rewrites), and whether it rewrites one: chapter 15 is chapter 9's
// operator on client-go alone. Its branch has its base's layout (chapter
// 9 runs on your machine: no manifests, webhook or faults), its commit is
// its base's child, and its lesson is its diff against its base (make
// diff-chapter 15).
func rewritten(n int) (int, bool) {
	c, err := chapters.Get(n)
	if err != nil || c.Rewrites == 0 {
		return 0, false
	}
	return c.Rewrites, true
}

// base is the chapter that chapter n builds on: n-1, or the chapter it
// rewrites (the table's Chapter.Base).
func base(n int) int {
	if c, err := chapters.Get(n); err == nil {
		return c.Base()
	}
	return n - 1
}

// layout is the chapter whose layout c's branch has: its own, or its
// base's when it rewrites one.
func layoutOf(c chapter) int {
	if b, ok := rewritten(c.Number); ok {
		return b
	}
	return c.Number
}

// branchPath returns where the file or directory p of the course
// repository is in chapter c's branch, and false if it is not there.
func branchPath(p string, c chapter) (string, bool) {
	p = path.Clean(p)
	for _, r := range pathRules(c) {
		rest, ok := strings.CutPrefix(p, r.from)
		if !ok || (rest != "" && rest[0] != '/') {
			continue
		}
		if layoutOf(c) < r.since && r.to == "" {
			continue
		}
		if r.to == "" || layoutOf(c) < r.since {
			return "", false
		}
		if r.to == "test/e2e" {
			rest = suiteFileName(rest, c)
		}
		return r.to + rest, true
	}
	return "", false
}

// arrivals lists the course's files, of files, that chapter n's branch has
// and chapter base(n)'s does not, outside the chapters' directories: what the
// lesson adds beside its package (chapter 10's manifests, image and deploy
// targets, chapter 11's webhook configuration and certificates, chapter
// 12's fault injection). The test framework's parts that come with a
// chapter (tests/) are its suite's, not its lesson's. make diff-chapter N
// shows them as new files.
func arrivals(n int, files []string) []string {
	var out []string
	for _, f := range files {
		if strings.HasPrefix(f, "chapters/") || strings.HasPrefix(f, "tests/") {
			continue
		}
		_, now := branchPath(f, chapter{Number: n})
		_, before := branchPath(f, chapter{Number: base(n)})
		if now && !before {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// suiteFileName renames the files of a chapter's suite the way kubebuilder
// names them in test/e2e: chapterNN_test.go is e2e_test.go and
// suite_test.go is e2e_suite_test.go, so that git shows the specs of two
// chapters as one file changed.
func suiteFileName(rest string, c chapter) string {
	switch rest {
	case "/" + chapters.SuiteName(c.Number) + "_test.go":
		return "/e2e_test.go"
	case "/suite_test.go":
		return "/e2e_suite_test.go"
	}
	return rest
}

// output is a file of a branch: a blob of the course copied as is (id),
// or new content (data).
type output struct {
	mode string
	id   string
	data []byte
}

// shared is what every branch makes the same way from the course, computed
// once per run: the Makefile.
type shared struct {
	makefile []byte
}

// sharedFiles computes what every branch shares.
func sharedFiles(s *source) (*shared, error) {
	makefile, err := branchMakefile(s)
	if err != nil {
		return nil, err
	}
	return &shared{makefile: makefile}, nil
}

// branchFiles builds the tree of chapter c's branch.
func branchFiles(s *source, sh *shared, c chapter) (map[string]output, error) {
	out := map[string]output{}
	from := map[string]string{} // branch path: course path
	var readmes []string
	for _, p := range slices.Sorted(maps.Keys(s.files)) {
		bp, ok := branchPath(p, c)
		if !ok {
			continue
		}
		if other, dup := from[bp]; dup {
			return nil, fmt.Errorf("%s and %s would both be %s in %s", other, p, bp, c.Branch())
		}
		from[bp] = p
		f := s.files[p]
		if bp == "README.md" || bp == "README.zh-CN.md" {
			readmes = append(readmes, p) // made once the rest of the tree is known
			continue
		}
		out[bp] = output{mode: f.mode, id: f.id}
		if !strings.HasSuffix(p, ".go") && bp != ".golangci.yml" {
			continue
		}
		data, err := s.read(p)
		if err != nil {
			return nil, err
		}
		changed, err := transform(bp, data, s, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if changed != nil {
			out[bp] = output{mode: f.mode, data: changed}
		}
	}
	if err := tidyModule(s, out); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Branch(), err)
	}
	out["Makefile"] = output{mode: "100644", data: chapterMakefile(sh.makefile, c)}
	include, err := chapterInclude(c)
	if err != nil {
		return nil, err
	}
	out["scripts/chapters.mk"] = output{mode: "100644", data: include}
	suite, err := chapterSuite(c)
	if err != nil {
		return nil, err
	}
	out[suiteFile] = output{mode: "100644", data: suite}
	for _, p := range readmes { // so that each README may link to the other
		bp, _ := branchPath(p, c)
		out[bp] = output{}
	}
	for _, p := range readmes {
		data, err := s.read(p)
		if err != nil {
			return nil, err
		}
		bp, _ := branchPath(p, c)
		out[bp] = output{mode: s.files[p].mode, data: branchReadme(data, bp, s, c, out)}
	}
	for _, want := range []string{"README.md", "cmd/main.go", "config/rbac/role.yaml", "internal/controller", "test/e2e"} {
		if !hasPath(out, want) {
			return nil, fmt.Errorf("%s would have no %s", c.Branch(), want)
		}
	}
	return out, nil
}

// transform returns the branch's version of a Go file (or of
// .golangci.yml) at branch path bp, or nil when it is the course's as is:
// imports follow pathRules, the chapter's package is named controller and
// the suite's e2e, and the framework's messages name the branch's make
// target for the suite.
func transform(bp string, data []byte, s *source, c chapter) ([]byte, error) {
	orig := data
	if bp == ".golangci.yml" {
		data = golangciConfig(data)
		return changedOrNil(data, orig), nil
	}
	var err error
	if data, err = rewriteImports(data, func(imp string) (string, error) { return importPath(imp, s.module, c) }); err != nil {
		return nil, err
	}
	switch path.Dir(bp) {
	case "internal/controller":
		data, err = renamePackage(data, "controller")
	case "test/e2e":
		data, err = renamePackage(data, "e2e")
	case "test/e2e/framework":
		data = []byte(strings.ReplaceAll(string(data), "make test-chapter N", "make test-e2e"))
	}
	if err != nil {
		return nil, err
	}
	return changedOrNil(data, orig), nil
}

func changedOrNil(data, orig []byte) []byte {
	if string(data) == string(orig) {
		return nil
	}
	return data
}

// importPath is where a package of the course is in chapter c's branch.
// The course's operator/controller, which runs the chapter that
// $OPERATOR_CHAPTER names, is the chapter's package there,
// internal/controller: both have the NewManager that cmd/main.go calls.
func importPath(imp, module string, c chapter) (string, error) {
	rel, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return imp, nil
	}
	switch rel {
	case "operator/controller":
		return module + "/internal/controller", nil
	case "chapters":
		return module + "/internal/chapters", nil
	}
	bp, ok := branchPath(rel, c)
	if !ok {
		return "", fmt.Errorf("imports %s, which %s does not have", imp, c.Branch())
	}
	return module + "/" + bp, nil
}

// golangciConfig points the linter's exclusions for the suites (Ginkgo's
// dot-imports) at test/, where the suites are in a branch.
func golangciConfig(data []byte) []byte {
	return []byte(strings.ReplaceAll(string(data), "- path: tests/\n", "- path: test/\n"))
}

// hasPath reports whether the branch has the file p or files below p.
func hasPath(files map[string]output, p string) bool {
	if _, ok := files[p]; ok {
		return true
	}
	for f := range files {
		if strings.HasPrefix(f, p+"/") {
			return true
		}
	}
	return false
}
