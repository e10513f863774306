package main

import (
	ctrl "sigs.k8s.io/controller-runtime"

	ch01 "example.com/redis-operator/chapters/01-create-pods"
)

// chapterSetup wires one chapter's reconciler into a manager.
type chapterSetup struct {
	number int
	slug   string
	setup  func(mgr ctrl.Manager) error
}

// chapters lists every chapter in order; the last one is the default.
var chapters = []chapterSetup{
	{1, "create-pods", func(mgr ctrl.Manager) error { return ch01.NewRedisReconciler(mgr).SetupWithManager(mgr) }},
}
