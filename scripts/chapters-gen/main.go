// Command chapters-gen writes what is generated from the table of
// chapters (package chapters): scripts/chapters.mk, the table as Make
// variables, and operator/controller/zz_generated.managers.go, the
// operator's map from a chapter's number to its package's NewManager. So
// a chapter is added with its row and its directory, then `make
// manifests`. With --controller-gen it also runs controller-gen over the
// Go markers: the CRD and deepcopy code from api/, each chapter's role
// and webhook configuration from its package, and the shipped chapter's
// copied into config/. With --check it writes nothing and fails if any of
// it is stale (make verify-manifests).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"example.com/redis-operator/chapters"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	root := flag.String("root", ".", "the repository's root")
	check := flag.Bool("check", false, "write nothing; fail if a generated file is stale")
	controllerGen := flag.String("controller-gen", "", "controller-gen's path: also generate from the Go markers")
	flag.Parse()
	files, err := generated()
	if err != nil {
		return err
	}
	stale, err := tableFiles(*root, files, *check)
	if err != nil {
		return err
	}
	if *controllerGen != "" {
		fromMarkers, err := markers(*root, *controllerGen, *check)
		if err != nil {
			return err
		}
		stale = append(stale, fromMarkers...)
	}
	if len(stale) > 0 {
		return fmt.Errorf("stale, not what the table of chapters (chapters/chapters.go) and the Go markers make: %s; run make manifests and commit the result", strings.Join(stale, ", "))
	}
	if *check {
		fmt.Println("Generated files are up to date")
	}
	return nil
}

// tableFiles writes the files generated from the table, or, with check,
// returns those that differ from it.
func tableFiles(root string, files map[string][]byte, check bool) ([]string, error) {
	var stale []string
	for _, p := range sortedKeys(files) {
		path := filepath.Join(root, filepath.FromSlash(p))
		if check {
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, files[p]) {
				stale = append(stale, p)
			}
			continue
		}
		if err := os.WriteFile(path, files[p], 0o644); err != nil {
			return nil, err
		}
	}
	return stale, nil
}

// markers runs controller-gen over the Go markers, into the repository
// or, with check, into a scratch directory compared with it; it returns
// what differs.
func markers(root, controllerGen string, check bool) ([]string, error) {
	out := root
	if check {
		tmp, err := os.MkdirTemp("", "chapters-gen-")
		if err != nil {
			return nil, err
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		out = tmp
	}
	gen := func(args ...string) error {
		if !check {
			fmt.Println(controllerGen, strings.Join(args, " "))
		}
		cmd := exec.Command(controllerGen, args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("controller-gen %s: %w", strings.Join(args, " "), err)
		}
		return nil
	}
	// made pairs each file checked in with where this run wrote it.
	made := map[string]string{}
	in := func(p string) string { return filepath.Join(out, filepath.FromSlash(p)) }
	if err := gen("object", "paths=./api/...", "output:object:dir="+in("api/v1")); err != nil {
		return nil, err
	}
	made["api/v1/zz_generated.deepcopy.go"] = in("api/v1/zz_generated.deepcopy.go")
	if err := gen("crd", "paths=./api/...", "output:crd:artifacts:config="+in("config/crd/bases")); err != nil {
		return nil, err
	}
	// Every CRD, checked in or generated: one of either alone is stale.
	checkedIn, _ := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	written, _ := filepath.Glob(in("config/crd/bases/*.yaml"))
	for _, c := range append(checkedIn, written...) {
		p := "config/crd/bases/" + filepath.Base(c)
		made[p] = in(p)
	}
	for _, c := range chapters.All {
		dir := in(c.Dir())
		if err := gen("rbac:roleName="+chapters.RoleName, "webhook", "paths=./"+c.Dir()+"/...",
			"output:rbac:dir="+dir, "output:webhook:dir="+dir); err != nil {
			return nil, err
		}
		made[c.Dir()+"/role.yaml"] = in(c.Dir() + "/role.yaml")
		made[c.Dir()+"/manifests.yaml"] = in(c.Dir() + "/manifests.yaml")
	}
	shipped := chapters.All[chapters.Shipped-1].Dir()
	copies := map[string]string{"config/rbac/role.yaml": shipped + "/role.yaml", "config/webhook/manifests.yaml": shipped + "/manifests.yaml"}
	for _, to := range sortedKeys(copies) {
		if check {
			made[to] = made[copies[to]]
			continue
		}
		fmt.Printf("cp %s %s\n", copies[to], to)
		data, err := os.ReadFile(in(copies[to]))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(in(to), data, 0o644); err != nil {
			return nil, err
		}
	}
	if !check {
		return nil, nil
	}
	var stale []string
	for _, p := range sortedKeys(made) {
		if differs(filepath.Join(root, filepath.FromSlash(p)), made[p]) {
			stale = append(stale, p)
		}
	}
	return stale, nil
}

// differs reports whether the file checked in and the one generated
// differ, a missing file being empty, and shows how (diff -u).
func differs(checkedIn, generated string) bool {
	a, _ := os.ReadFile(checkedIn)
	b, _ := os.ReadFile(generated)
	if bytes.Equal(a, b) {
		return false
	}
	cmd := exec.Command("diff", "-u", "-N", checkedIn, generated)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	_ = cmd.Run() // diff exits 1 when the files differ, as they do
	return true
}

// generated returns the generated files, by their path in the repository.
func generated() (map[string][]byte, error) {
	managers, err := operatorManagers()
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		"scripts/chapters.mk":                          []byte(chapters.MakeInclude(chapters.All, chapters.Shipped)),
		"operator/controller/zz_generated.managers.go": managers,
	}, nil
}

// operatorManagers is operator/controller/zz_generated.managers.go.
func operatorManagers() ([]byte, error) {
	if len(chapters.All) == 0 {
		return nil, errors.New("the table of chapters is empty")
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by scripts/chapters-gen from the table of chapters (chapters/chapters.go). DO NOT EDIT.\n\n")
	b.WriteString("package controller\n\nimport (\n\t\"k8s.io/client-go/rest\"\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\n")
	for _, c := range chapters.All {
		fmt.Fprintf(&b, "\tch%02d \"example.com/redis-operator/%s\"\n", c.Number, c.Dir())
	}
	b.WriteString(")\n\n// managers are the chapters' NewManager, by the chapter's number: one\n// for each row of the table of chapters.\n")
	b.WriteString("var managers = map[int]func(*rest.Config, ctrl.Options) (ctrl.Manager, error){\n")
	for _, c := range chapters.All {
		fmt.Fprintf(&b, "\t%d: ch%02d.NewManager,\n", c.Number, c.Number)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
