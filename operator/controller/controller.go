// Package controller runs any chapter of the course: its NewManager runs
// the reconciler of one chapter of the table of chapters (package
// chapters), so that one operator binary runs every chapter. The
// environment variable OPERATOR_CHAPTER names the chapter (`make run N`
// and the end-to-end suites set it); without it, the shipped chapter
// runs (chapters.Shipped).
//
// In a chapter's branch, cmd/main.go imports internal/controller instead,
// the chapter's own package, which has the same NewManager. So the
// operator's main is the same code in the course and in every branch, and
// has nothing to say about chapters.
package controller

import (
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"example.com/redis-operator/chapters"

	ch01 "example.com/redis-operator/chapters/01-create-pods"
	ch02 "example.com/redis-operator/chapters/02-finalizer-tracking"
	ch03 "example.com/redis-operator/chapters/03-owner-references"
	ch04 "example.com/redis-operator/chapters/04-watch-pod-deletes"
	ch05 "example.com/redis-operator/chapters/05-rebuild-pods"
	ch06 "example.com/redis-operator/chapters/06-scale-and-status"
	ch07 "example.com/redis-operator/chapters/07-idiomatic"
	ch08 "example.com/redis-operator/chapters/08-own-pods"
	ch09 "example.com/redis-operator/chapters/09-at-scale"
	ch10 "example.com/redis-operator/chapters/10-in-cluster"
	ch11 "example.com/redis-operator/chapters/11-admission"
	ch12 "example.com/redis-operator/chapters/12-faults"
	ch13 "example.com/redis-operator/chapters/13-under-the-hood"
)

// managers are the chapters' NewManager, by the chapter's number: one for
// each row of the table of chapters (a test checks it).
var managers = map[int]func(*rest.Config, ctrl.Options) (ctrl.Manager, error){
	1:  ch01.NewManager,
	2:  ch02.NewManager,
	3:  ch03.NewManager,
	4:  ch04.NewManager,
	5:  ch05.NewManager,
	6:  ch06.NewManager,
	7:  ch07.NewManager,
	8:  ch08.NewManager,
	9:  ch09.NewManager,
	10: ch10.NewManager,
	11: ch11.NewManager,
	12: ch12.NewManager,
	13: ch13.NewManager,
}

// EnvChapter is the environment variable that names the chapter to run.
const EnvChapter = "OPERATOR_CHAPTER"

// selected returns the chapter that $OPERATOR_CHAPTER names, or the
// shipped one.
func selected() (chapters.Chapter, error) {
	v, ok := os.LookupEnv(EnvChapter)
	if !ok || v == "" {
		return chapters.Get(chapters.Shipped)
	}
	c, err := chapters.Parse(v)
	if err != nil {
		return chapters.Chapter{}, fmt.Errorf("%s: %w", EnvChapter, err)
	}
	return c, nil
}

// NewManager returns a manager that runs the selected chapter's reconciler,
// made with the operator's options and the chapter's own.
func NewManager(cfg *rest.Config, opts ctrl.Options) (ctrl.Manager, error) {
	c, err := selected()
	if err != nil {
		return nil, err
	}
	newManager, ok := managers[c.Number]
	if !ok {
		return nil, fmt.Errorf("chapter %d is in the table of chapters, but the operator has no NewManager for it (operator/controller)", c.Number)
	}
	ctrl.Log.WithName("setup").Info("Running the reconciler of one chapter", "chapter", c.Number, "lesson", c.Slug)
	return newManager(cfg, opts)
}
