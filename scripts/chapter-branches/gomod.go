package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A branch has fewer packages than the course, and so may need fewer
// modules: chapter 10's image and metrics filters bring modules that the
// branches before it do not import, and the course's own tooling
// (goldmark, for the README checks) brings one that no branch imports. So
// a branch's go.mod and go.sum are what `go mod tidy` makes of the course's
// for the branch's Go files alone: the same versions, fewer modules, the
// "// indirect" marks where the branch's imports put them. Each branch's
// `make test` checks that they are tidy (`make verify-chapter-branches`).

// tidyModule runs `go mod tidy` (goModTidy) on the Go files of out, a
// branch's tree, with the course's go.mod and go.sum, and puts the result
// in out.
func tidyModule(s *source, out map[string]output) error {
	files := map[string][]byte{}
	for _, p := range []string{"go.mod", "go.sum"} {
		if _, ok := s.files[p]; ok {
			out[p] = output{mode: s.files[p].mode, id: s.files[p].id}
		}
	}
	for p, o := range out {
		if !strings.HasSuffix(p, ".go") && p != "go.mod" && p != "go.sum" {
			continue
		}
		data, err := outputData(s, o)
		if err != nil {
			return err
		}
		files[p] = data
	}
	tidy, err := goModTidy(files)
	if err != nil {
		return err
	}
	// What makes a branch's go.mod depend on the commit alone, and not on
	// what the module proxy answers today: it requires only what the
	// course's requires, at the same versions.
	course := requires(files["go.mod"])
	for mod, v := range requires(tidy["go.mod"]) {
		if course[mod] != v {
			return fmt.Errorf("go mod tidy of the branch requires %s %s, which the course's go.mod does not (%q): run go mod tidy in the course", mod, v, course[mod])
		}
	}
	for _, p := range []string{"go.mod", "go.sum"} {
		data, ok := tidy[p]
		if !ok {
			delete(out, p)
			continue
		}
		if course, ok := s.files[p]; ok {
			if orig, err := s.read(p); err == nil && bytes.Equal(orig, data) {
				out[p] = output{mode: course.mode, id: course.id}
				continue
			}
		}
		out[p] = output{mode: "100644", data: data}
	}
	return nil
}

// goModTidy writes files (paths: contents) into a scratch directory, runs
// `go mod tidy` there and returns the go.mod and go.sum it leaves. Its
// versions are the course's go.mod's, which is tidy, so go mod tidy adds
// no requirement and moves none; but it reads the modules of the tests
// of the packages the branch imports, which no build of the course
// downloads (github.com/joshdk/go-junit, for Ginkgo's reporters). go gets
// them as it always does: from the Go module cache, else from GOPROXY.
var goModTidy = func(files map[string][]byte) (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "chapter-branch-tidy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for p, data := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, p), data, 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command("go", "mod", "tidy")
	cmd.Dir = dir
	// The branch's module alone, with the toolchain that runs this, as the
	// branch's own `make vet` will check it.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go mod tidy: %w: %s%s", err, msg, tidyHint(string(msg)))
	}
	tidy := map[string][]byte{}
	for _, p := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(dir, p))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		tidy[p] = data
	}
	return tidy, nil
}

// outputData is the content of a file of a branch.
func outputData(s *source, o output) ([]byte, error) {
	if o.data != nil || o.id == "" {
		return o.data, nil
	}
	return s.blobs.read(o.id)
}

// tidyHint says how to fill the Go module cache when go mod tidy failed
// for want of a module it could not download.
func tidyHint(msg string) string {
	for _, offline := range []string{"GOPROXY=off", "dial tcp", "no such host", "connection refused", "i/o timeout", "proxyconnect", "Forbidden", "Not Found", "not found:"} {
		if strings.Contains(msg, offline) {
			return "\n(a module is not in the Go module cache and could not be downloaded: where the module proxy answers, run `go mod tidy -diff` in the course, which downloads every module go mod tidy reads and changes no file; or set GOPROXY to a proxy that answers)"
		}
	}
	return ""
}

// requires returns the modules a go.mod requires, with their versions.
func requires(gomod []byte) map[string]string {
	reqs := map[string]string{}
	block := false
	for _, line := range strings.Split(string(gomod), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "require" && f[1] == "(":
			block = true
		case block && len(f) == 1 && f[0] == ")":
			block = false
		case block && len(f) == 2:
			reqs[f[0]] = f[1]
		case len(f) == 3 && f[0] == "require":
			reqs[f[1]] = f[2]
		}
	}
	return reqs
}
