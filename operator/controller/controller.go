// Package controller is the operator's table of chapters: its NewManager
// runs the reconciler of one chapter, so that one operator binary runs
// every chapter. The environment variable OPERATOR_CHAPTER names the
// chapter (`make run N` and the end-to-end suites set it); without it,
// the shipped chapter runs (Shipped).
//
// In a chapter's branch, cmd/main.go imports internal/controller instead,
// the chapter's own package, which has the same NewManager. So the
// operator's main is the same code in the course and in every branch, and
// has nothing to say about chapters.
package controller

import (
	"fmt"
	"os"
	"strconv"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

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

// Chapter is one chapter of the course and the entry point of its package.
type Chapter struct {
	Number     int
	Slug       string
	NewManager func(*rest.Config, ctrl.Options) (ctrl.Manager, error)
}

// Chapters lists every chapter in order.
var Chapters = []Chapter{
	{1, "create-pods", ch01.NewManager},
	{2, "finalizer-tracking", ch02.NewManager},
	{3, "owner-references", ch03.NewManager},
	{4, "watch-pod-deletes", ch04.NewManager},
	{5, "rebuild-pods", ch05.NewManager},
	{6, "scale-and-status", ch06.NewManager},
	{7, "idiomatic", ch07.NewManager},
	{8, "own-pods", ch08.NewManager},
	{9, "at-scale", ch09.NewManager},
	{10, "in-cluster", ch10.NewManager},
	{11, "admission", ch11.NewManager},
	{12, "faults", ch12.NewManager},
	{13, "under-the-hood", ch13.NewManager},
}

// Latest is the last chapter.
func Latest() Chapter { return Chapters[len(Chapters)-1] }

// ShippedChapter is the chapter that runs unless another is asked for,
// whose role and webhook configuration config/ holds (the Makefile's
// SHIPPED_CHAPTER): the course's last chapter on controller-runtime.
// Chapter 13 rewrites chapter 9 on client-go alone, to show what
// controller-runtime is made of; it runs when asked for.
const ShippedChapter = 12

// Shipped is the chapter that runs unless another is asked for.
func Shipped() Chapter { return Chapters[ShippedChapter-Chapters[0].Number] }

// EnvChapter is the environment variable that names the chapter to run.
const EnvChapter = "OPERATOR_CHAPTER"

// selected returns the chapter that $OPERATOR_CHAPTER names, or the
// shipped one.
func selected() (Chapter, error) {
	v := os.Getenv(EnvChapter)
	if v == "" {
		return Shipped(), nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < Chapters[0].Number || n > Latest().Number {
		return Chapter{}, fmt.Errorf("%s: the chapter must be a number from %d to %d, got %q", EnvChapter, Chapters[0].Number, Latest().Number, v)
	}
	return Chapters[n-Chapters[0].Number], nil
}

// NewManager returns a manager that runs the selected chapter's reconciler,
// made with the operator's options and the chapter's own.
func NewManager(cfg *rest.Config, opts ctrl.Options) (ctrl.Manager, error) {
	c, err := selected()
	if err != nil {
		return nil, err
	}
	ctrl.Log.WithName("setup").Info("Running the reconciler of one chapter", "chapter", c.Number, "lesson", c.Slug)
	return c.NewManager(cfg, opts)
}
