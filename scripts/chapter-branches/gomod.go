package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// A branch has the course's go.mod and go.sum: the same versions of
// everything. Two things can differ, because a branch has fewer packages
// than the course:
//   - the "// indirect" marks: go mod tidy marks a module direct when a
//     package of the module imports it, so a module that only later
//     chapters import is indirect in the earlier ones. tidyRequires moves
//     those marks the way go mod tidy does;
//   - the modules that only the course's own tooling imports (goldmark,
//     for the README checks in tests/docs) and no file of any branch:
//     dropModules removes them from go.mod and go.sum, as go mod tidy
//     would. Each branch's `make test` checks that it is tidy (`make
//     verify-chapter-branches`), which would catch a dropped module that
//     another one needs.

// importsOf adds the import paths of a Go file to imports.
func importsOf(src []byte, imports map[string]bool) error {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if err != nil {
		return err
	}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return err
		}
		imports[p] = true
	}
	return nil
}

// require is one requirement of a go.mod.
type require struct {
	module, version string
	indirect        bool
}

// tidyRequires returns gomod with each requirement marked direct when one
// of imports is a package of that module (the longest module path that
// prefixes it), and indirect otherwise: the direct requirements in the
// first require block, the indirect ones in the second, each sorted, as
// go mod tidy writes them. It returns gomod unchanged when every mark is
// right already.
func tidyRequires(gomod []byte, imports map[string]bool) ([]byte, error) {
	lines, reqs, blocks, err := parseRequires(gomod)
	if err != nil {
		return nil, err
	}
	direct := map[string]bool{}
	for imp := range imports {
		direct[moduleOf(imp, reqs)] = true
	}
	changed := false
	for i := range reqs {
		if reqs[i].indirect == direct[reqs[i].module] {
			reqs[i].indirect = !reqs[i].indirect
			changed = true
		}
	}
	if !changed {
		return gomod, nil
	}
	if len(blocks) != 2 {
		return nil, fmt.Errorf("go.mod: want two require blocks (direct, then indirect), found %d", len(blocks))
	}
	slices.SortStableFunc(reqs, func(a, b require) int { return strings.Compare(a.module, b.module) })
	var block [2]strings.Builder
	for _, r := range reqs {
		if r.indirect {
			fmt.Fprintf(&block[1], "\t%s %s // indirect\n", r.module, r.version)
		} else {
			fmt.Fprintf(&block[0], "\t%s %s\n", r.module, r.version)
		}
	}
	var out strings.Builder
	out.WriteString(strings.Join(lines[:blocks[0][0]], ""))
	out.WriteString(block[0].String())
	out.WriteString(strings.Join(lines[blocks[0][1]:blocks[1][0]], ""))
	out.WriteString(block[1].String())
	out.WriteString(strings.Join(lines[blocks[1][1]:], ""))
	return []byte(out.String()), nil
}

// moduleOf returns the longest of the required modules that is imp's
// module, or "" for the standard library and the main module.
func moduleOf(imp string, reqs []require) string {
	best := ""
	for _, r := range reqs {
		if (imp == r.module || strings.HasPrefix(imp, r.module+"/")) && len(r.module) > len(best) {
			best = r.module
		}
	}
	return best
}

// parseRequires splits a go.mod into lines and reads its require blocks:
// the requirements, and the line range of each block's entries. It
// accepts what go mod tidy writes, and says so about anything else.
func parseRequires(gomod []byte) (lines []string, reqs []require, blocks [][2]int, err error) {
	lines = strings.SplitAfter(string(gomod), "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "require ") && !strings.HasSuffix(l, "(") {
			return nil, nil, nil, fmt.Errorf("go.mod: a one-line require (%q) is not supported here; go mod tidy writes blocks", l)
		}
		if l != "require (" {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ")"; i++ {
			f := strings.Fields(lines[i])
			switch {
			case len(f) == 2:
				reqs = append(reqs, require{module: f[0], version: f[1]})
			case len(f) == 4 && f[2] == "//" && f[3] == "indirect":
				reqs = append(reqs, require{module: f[0], version: f[1], indirect: true})
			default:
				return nil, nil, nil, fmt.Errorf("go.mod: unexpected line %q in a require block", strings.TrimSpace(lines[i]))
			}
		}
		blocks = append(blocks, [2]int{start, i})
	}
	return lines, reqs, blocks, nil
}

// courseOnlyModules returns the directly required modules of the course
// that no file of any branch imports (branchImports: the imports of every
// branch's Go files).
func courseOnlyModules(gomod []byte, branchImports map[string]bool) (map[string]bool, error) {
	_, reqs, _, err := parseRequires(gomod)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for imp := range branchImports {
		used[moduleOf(imp, reqs)] = true
	}
	only := map[string]bool{}
	for _, r := range reqs {
		if !r.indirect && !used[r.module] {
			only[r.module] = true
		}
	}
	return only, nil
}

// dropModules removes the modules in drop from a go.mod's require blocks
// or from a go.sum.
func dropModules(data []byte, drop map[string]bool, isSum bool) []byte {
	if len(drop) == 0 {
		return data
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && drop[f[0]] && (isSum || strings.HasPrefix(line, "\t")) {
			continue
		}
		out.WriteString(line)
	}
	return []byte(out.String())
}
