package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The answers tests/exercise uses pass the vet; three wrong answers
// (tests/exercise/testdata) are refused before any run, each for what it
// does: a deciding check that asserts nothing, a call of the chapter's
// own spec, and a look at the environment. So is a call of a spec of the
// suite's own package.
func TestVetSpec(t *testing.T) {
	for _, tc := range []struct {
		name, suite, file string
		want              []string // each a problem's words; none: accepted
	}{
		{"chapter 5's answer", "chapter05", "spec05_test.go.txt", nil},
		{"chapter 13's answer", "chapter13", "spec13_test.go.txt", nil},
		{"asserts nothing", "chapter05", "wrong-asserts-nothing05_test.go.txt", []string{"imports os", "its deciding check asserts nothing"}},
		{"calls the chapter's own spec", "chapter05", "wrong-own-spec05_test.go.txt", []string{"calls ExpectPodComesBack, one of the framework's specs"}},
		{"reads the environment", "chapter05", "wrong-reads-env05_test.go.txt", []string{"imports os", "names OPERATOR_CHAPTER", "reads Chapter"}},
		{"calls a spec of the suite's package", "chapter13", "", []string{"uses expectStaleCacheSparesForeignPod, the chapter's own"}},
		{"a variable named as one of the suite's", "chapter14", "own-name", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("../../tests/exercise/testdata", tc.file)
			if tc.file == "own-name" {
				path = filepath.Join(t.TempDir(), "spec_test.go")
				src := `package chapter14

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("The API server", func() {
	It("is waited for", func(ctx SpecContext) {
		kubeletBackOff := time.Minute
		Expect(kubeletBackOff).To(BeNumerically(">", 0))
	})
})
`
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.file == "" {
				path = filepath.Join(t.TempDir(), "spec_test.go")
				src := `package chapter13

import . "github.com/onsi/ginkgo/v2"

var _ = Describe("A cache that is behind", func() {
	It("spares the pod", func(ctx SpecContext) {
		expectStaleCacheSparesForeignPod(ctx, env.NewNamespace(ctx))
	})
})
`
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			problems, err := vetSpec(path, filepath.Join("../../tests", tc.suite), "../../tests/framework")
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(problems, "\n")
			if len(tc.want) == 0 && len(problems) > 0 {
				t.Errorf("refused an answer:\n%s", all)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems %q, want one saying %q", all, w)
				}
			}
		})
	}
}
