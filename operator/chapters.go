package main

import (
	ctrl "sigs.k8s.io/controller-runtime"

	ch01 "example.com/redis-operator/chapters/01-create-pods"
	ch02 "example.com/redis-operator/chapters/02-finalizer-tracking"
	ch03 "example.com/redis-operator/chapters/03-owner-references"
	ch04 "example.com/redis-operator/chapters/04-watch-pod-deletes"
	ch05 "example.com/redis-operator/chapters/05-rebuild-pods"
	ch06 "example.com/redis-operator/chapters/06-scale-and-status"
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
	{2, "finalizer-tracking", func(mgr ctrl.Manager) error { return ch02.NewRedisReconciler(mgr).SetupWithManager(mgr) }},
	{3, "owner-references", func(mgr ctrl.Manager) error { return ch03.NewRedisReconciler(mgr).SetupWithManager(mgr) }},
	{4, "watch-pod-deletes", func(mgr ctrl.Manager) error { return ch04.NewRedisReconciler(mgr).SetupWithManager(mgr) }},
	{5, "rebuild-pods", func(mgr ctrl.Manager) error { return ch05.NewRedisReconciler(mgr).SetupWithManager(mgr) }},
	{6, "scale-and-status", func(mgr ctrl.Manager) error { return ch06.NewRedisReconciler(mgr).SetupWithManager(mgr) }},
}
