package main

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	ch01 "example.com/redis-operator/chapters/01-create-pods"
	ch02 "example.com/redis-operator/chapters/02-finalizer-tracking"
	ch03 "example.com/redis-operator/chapters/03-owner-references"
	ch04 "example.com/redis-operator/chapters/04-watch-pod-deletes"
	ch05 "example.com/redis-operator/chapters/05-rebuild-pods"
	ch06 "example.com/redis-operator/chapters/06-scale-and-status"
	ch07 "example.com/redis-operator/chapters/07-idiomatic"
	ch08 "example.com/redis-operator/chapters/08-at-scale"
)

// chapterSetup wires one chapter's reconciler into a manager.
type chapterSetup struct {
	number int
	slug   string
	setup  func(mgr ctrl.Manager, maxConcurrentReconciles int) error
	// concurrent: the chapter takes --max-concurrent-reconciles (chapters
	// before 8 reconcile one Redis at a time).
	concurrent bool
	// cache, if set, returns the manager's cache options the chapter
	// needs; without it the cache holds every object the reconciler reads.
	cache func() cache.Options
}

// chapters lists every chapter in order; the last one is the default.
var chapters = []chapterSetup{
	{1, "create-pods", func(mgr ctrl.Manager, _ int) error { return ch01.NewRedisReconciler(mgr).SetupWithManager(mgr) }, false, nil},
	{2, "finalizer-tracking", func(mgr ctrl.Manager, _ int) error { return ch02.NewRedisReconciler(mgr).SetupWithManager(mgr) }, false, nil},
	{3, "owner-references", func(mgr ctrl.Manager, _ int) error { return ch03.NewRedisReconciler(mgr).SetupWithManager(mgr) }, false, nil},
	{4, "watch-pod-deletes", func(mgr ctrl.Manager, _ int) error { return ch04.NewRedisReconciler(mgr).SetupWithManager(mgr) }, false, nil},
	{5, "rebuild-pods", func(mgr ctrl.Manager, _ int) error { return ch05.NewRedisReconciler(mgr).SetupWithManager(mgr) }, false, nil},
	{6, "scale-and-status", func(mgr ctrl.Manager, _ int) error { return ch06.NewRedisReconciler(mgr).SetupWithManager(mgr) }, false, nil},
	{7, "idiomatic", func(mgr ctrl.Manager, _ int) error { return ch07.NewRedisReconciler(mgr).SetupWithManager(mgr) }, false, nil},
	{8, "at-scale", func(mgr ctrl.Manager, n int) error { return ch08.NewRedisReconciler(mgr).SetupWithManager(mgr, n) }, true, ch08.CacheOptions},
}
