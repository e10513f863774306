package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// specHead is what each spec below starts with: chapter 5's package and
// the imports a spec may have.
const specHead = `//go:build e2e

package chapter05

import (
	"context"
	"syscall"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"example.com/redis-operator/tests/framework"
)

var _ = context.Background
var _ = syscall.Getpid
var _ = framework.Exercise
var _ = Equal
`

// The answers tests/exercise uses pass the vet; three wrong answers
// (tests/exercise/testdata) are refused before any run, each for what it
// does: a deciding check that asserts nothing, a call of the chapter's
// own spec, and a look at the environment. So is each way around a vetter
// of names found by reading it: the vet resolves what each name denotes,
// so none of them hides.
func TestVetSpec(t *testing.T) {
	for _, tc := range []struct {
		name, suite, file string
		src               string   // the spec, when there is no file
		second            string   // a file of the learner's beside the suite's, compiled in
		want              []string // each a problem's words; none: accepted
	}{
		{name: "chapter 5's answer", suite: "chapter05", file: "spec05_test.go.txt"},
		{name: "chapter 13's answer", suite: "chapter13", file: "spec13_test.go.txt"},
		{name: "asserts nothing", suite: "chapter05", file: "wrong-asserts-nothing05_test.go.txt", want: []string{"imports os", "its deciding check asserts nothing"}},
		{name: "calls the chapter's own spec", suite: "chapter05", file: "wrong-own-spec05_test.go.txt", want: []string{"calls ExpectPodComesBack, one of the framework's specs"}},
		{name: "reads the environment", suite: "chapter05", file: "wrong-reads-env05_test.go.txt", want: []string{"imports os", "names OPERATOR_CHAPTER", "reads Chapter"}},
		{name: "calls a spec of the suite's package", suite: "chapter13", src: `//go:build e2e

package chapter13

import . "github.com/onsi/ginkgo/v2"

var _ = Describe("A cache that is behind", func() {
	It("spares the pod", func(ctx SpecContext) {
		expectStaleCacheSparesForeignPod(ctx, env.NewNamespace(ctx))
	})
})
`, want: []string{"uses expectStaleCacheSparesForeignPod, the chapter's own"}},
		{name: "a variable named as one of the suite's", suite: "chapter14", src: `//go:build e2e

package chapter14

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
`},
		{name: "a dot-import of the framework hides no name", suite: "chapter05", src: `//go:build e2e

package chapter05

import (
	. "github.com/onsi/ginkgo/v2"

	. "example.com/redis-operator/tests/framework"
)

var _ = Describe("A pod deleted with kubectl", Exercise, func() {
	It("comes back", func(ctx SpecContext) {
		ExpectPodComesBack(ctx, env, env.NewNamespace(ctx))
	})
})
`, want: []string{"calls ExpectPodComesBack, one of the framework's specs"}},
		{name: "a parameter named as the suite's spec excuses no call of it", suite: "chapter13", src: `//go:build e2e

package chapter13

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
)

func twice(expectStaleCacheSparesForeignPod func(context.Context, string)) {}

var _ = Describe("A cache that is behind", func() {
	It("spares the pod", func(ctx SpecContext) {
		expectStaleCacheSparesForeignPod(ctx, env.NewNamespace(ctx))
	})
})
`, want: []string{"uses expectStaleCacheSparesForeignPod, the chapter's own"}},
		{name: "the environment read through an allowed package, by a name built at run time", suite: "chapter05", src: specHead + `
var _ = Describe("A pod deleted with kubectl", framework.Exercise, func() {
	It("comes back", func(ctx SpecContext) {
		framework.DecidingCheck("the build", func() {
			v, _ := syscall.Getenv("OPERATOR" + "_" + "CHA" + "PTER")
			Expect(v).To(Equal("5"))
		})
	})
})
`, want: []string{"reads the environment (syscall.Getenv)"}},
		{name: "an Expect without a matcher and an Eventually without Should assert nothing", suite: "chapter05", src: specHead + `
var _ = Describe("A pod deleted with kubectl", framework.Exercise, func() {
	It("comes back", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		framework.DecidingCheck("cache-1 comes back", func() {
			Expect(env.PodUIDs(ctx, ns, "cache"))
			Eventually(func() bool { return false })
		})
	})
})
`, want: []string{"its deciding check asserts nothing"}},
		{name: "a framework helper that holds its own deciding check", suite: "chapter05", src: specHead + `
var _ = Describe("A pod deleted with kubectl", framework.Exercise, func() {
	It("stays gone", func(ctx SpecContext) {
		ns := env.NewNamespace(ctx)
		env.DeletePodAndExpectNoRebuild(ctx, ns, "cache-1", nil)
	})
})
`, want: []string{"calls DeletePodAndExpectNoRebuild, one of the framework's specs"}},
		{name: "a second file beside the suite's is vetted too", suite: "chapter14", src: `//go:build e2e

package chapter14

import . "github.com/onsi/ginkgo/v2"

var _ = Describe("The API server", func() {
	It("goes away", func(ctx SpecContext) { viaSecondFile(ctx) })
})
`, second: `//go:build e2e

package chapter14

import "context"

func viaSecondFile(ctx context.Context) {
	expectRecoversFromAPIServerRestart(ctx, env.NewNamespace(ctx), true)
}
`, want: []string{"zz_vetspec_second_test.go", "uses expectRecoversFromAPIServerRestart, the chapter's own"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suite := filepath.Join("../../tests", tc.suite)
			if tc.second != "" {
				// It changes the suite's directory: alone, not beside the
				// cases that load the same suite.
				second := filepath.Join(suite, "zz_vetspec_second_test.go")
				if err := os.WriteFile(second, []byte(tc.second), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Remove(second) })
			} else {
				t.Parallel()
			}
			path := filepath.Join("../../tests/exercise/testdata", tc.file)
			if tc.file == "" {
				path = filepath.Join(t.TempDir(), "spec_test.go")
				if err := os.WriteFile(path, []byte(tc.src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			problems, err := vetSpec(path, suite, "../../tests/framework")
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(problems, "\n")
			if len(tc.want) == 0 && len(problems) > 0 {
				t.Errorf("refused an answer:\n%s", all)
			}
			if len(tc.want) > 0 && len(problems) == 0 {
				t.Errorf("accepted a spec that proves nothing; want problems saying %q", tc.want)
			}
			for _, w := range tc.want {
				if len(problems) > 0 && !strings.Contains(all, w) {
					t.Errorf("problems %q, want one saying %q", all, w)
				}
			}
		})
	}
}
