// Package controller runs any chapter of the course: its NewManager runs
// the reconciler of one chapter of the table of chapters (package
// chapters), so that one operator binary runs every chapter. The
// environment variable OPERATOR_CHAPTER names the chapter (`make run N`
// and the end-to-end suites set it); without it, the shipped chapter
// runs (chapters.Shipped).
//
// Its map from a chapter's number to that chapter's package is generated
// from the table (zz_generated.managers.go, by make manifests).
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
)

// selected returns the chapter that $OPERATOR_CHAPTER names, or the
// shipped one.
func selected() (chapters.Chapter, error) {
	v := os.Getenv(chapters.EnvChapter)
	if v == "" {
		return chapters.Get(chapters.Shipped)
	}
	c, err := chapters.Parse(v)
	if err != nil {
		return chapters.Chapter{}, fmt.Errorf("%s: %w", chapters.EnvChapter, err)
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
