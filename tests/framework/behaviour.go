package framework

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	myappv1 "example.com/redis-operator/api/v1"
)

// The behaviour that several chapters prove, as specs that declare their
// own Describe and It blocks, in the shape of cluster-api's
// QuickStartSpec: a chapter's suite lists the ones it proves, each with
// an Input that says what this chapter adds, and keeps only its own
// lesson specs in its own files. So a behaviour has one set of spec
// texts, labels and Serial decorators, wherever it is proven. Each spec
// starts from a namespace of its own with Redis cache and its running
// pods.

// behaviours are the shared specs by the names the table of chapters
// gives them (a row's Behaviours: the chapter that teaches each).
var behaviours = map[string]func(SpecInput) bool{
	"foreign-pod":   ForeignPodSpec,
	"rebuild":       RebuildSpec,
	"scale":         ScaleSpec,
	"status":        StatusSpec,
	"steady":        SteadySpec,
	"ended-pod":     EndedPodSpec,
	"no-finalizer":  NoFinalizerSpec,
	"own-pods":      OwnPodsSpec,
	"rebuild-first": RebuildFirstSpec,
}

// carryBehaviour registers the behaviour specs named, unchanged (no
// lesson of this chapter's), against env's operator: those of the
// chapters before it that its row says the suite carries.
func carryBehaviour(env *Env, names []string) {
	for _, name := range names {
		spec, ok := behaviours[name]
		if !ok {
			panic(fmt.Sprintf("chapter %d's suite carries the behaviour spec %q, which the framework does not have", env.Chapter, name))
		}
		spec(SpecInput{Env: env})
	}
}

// SpecInput is what every shared spec takes.
type SpecInput struct {
	// Env is the suite's environment (NewSuite's).
	Env *Env
	// Lesson says that the running chapter is the one that teaches this
	// behaviour: the specs that prove it are labelled Lesson, and `make
	// prove-chapter` runs them against the chapter before, where each
	// must fail after its LessonStep.
	Lesson bool
	// RecordsPods says that the chapter records each pod in a finalizer
	// of its Redis (chapters 2 to 6). RebuildSpec then checks that a
	// rebuilt pod stays recorded once, ScaleSpec that the Redis records
	// the pods a scale-up adds and forgets those a scale-down removed.
	RecordsPods bool
	// SaysRebuilt says that the chapter tells a rebuilt pod from a new one
	// with a SuccessfulRebuild event (chapters 5 and 6). RebuildSpec then
	// checks the event, ScaleSpec that a pod a scale-up creates again is
	// not called rebuilt.
	SaysRebuilt bool
}

// lessonIf is the Lesson label if lesson is set, else no label.
func lessonIf(lesson bool) Labels {
	if lesson {
		return Lesson
	}
	return Labels{}
}

// checkEnv stops the suite's construction when a spec function was not
// given the suite's Env.
func checkEnv(spec string, env *Env) {
	if env == nil {
		panic(spec + ": Input.Env is nil; pass the suite's Env (the one framework.NewSuite returned)")
	}
}

// newCache gives a spec a namespace of its own with Redis cache and its
// three running pods; with recordsPods, once the Redis records them.
func newCache(ctx SpecContext, e *Env, recordsPods bool) string {
	GinkgoHelper()
	ns := e.NewNamespace(ctx)
	e.CreateRedis(ctx, ns, "cache", 3)
	if recordsPods {
		Eventually(e.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(3))
	}
	return ns
}

// RebuildSpec proves chapter 5's lesson, which every later chapter keeps:
// a pod deleted with kubectl comes back with the same name and a new UID,
// also when deleted with others or again and again, and the Redis still
// deletes cleanly.
func RebuildSpec(in SpecInput) bool {
	checkEnv("RebuildSpec", in.Env)
	return Describe("A pod deleted with kubectl", func() {
		e := in.Env
		var ns string

		BeforeEach(func(ctx SpecContext) { ns = newCache(ctx, e, in.RecordsPods) })

		text := "comes back with the same name, a new UID, and runs"
		if in.SaysRebuilt {
			text += ", and the operator says it rebuilt it"
		}
		It(text, lessonIf(in.Lesson), func(ctx SpecContext) {
			ExpectPodComesBack(ctx, e, ns)
			if in.SaysRebuilt {
				Eventually(e.EventReasons).WithContext(ctx).WithArguments(ns, "Redis", "cache").
					Should(ContainElement("SuccessfulRebuild"))
			}
		})

		DescribeTable("comes back also when deleted together with others, without a reconcile error",
			func(ctx SpecContext, deleteArgs ...string) {
				expectPodsComeBackTogether(ctx, e, ns, deleteArgs...)
			},
			Entry("by name", lessonIf(in.Lesson), "delete", "pod", "cache-0", "cache-1", "cache-2"),
			Entry("by label", lessonIf(in.Lesson), "delete", "pods", "-l", "app.kubernetes.io/instance=cache"),
			Entry("forced, without grace period", lessonIf(in.Lesson), "delete", "pod", "cache-0", "cache-1", "cache-2", "--force", "--grace-period=0"),
		)

		text = "comes back each time it is deleted"
		if in.RecordsPods {
			text += ", still recorded by one finalizer"
		}
		It(text, lessonIf(in.Lesson), func(ctx SpecContext) {
			expectPodComesBackEachTime(ctx, e, ns)
			if in.RecordsPods {
				Expect(e.Finalizers(ctx, ns, "cache")).To(ConsistOf(
					myappv1.GroupName+"/cache-0", myappv1.GroupName+"/cache-1", myappv1.GroupName+"/cache-2"))
			}
		})

		// Never a lesson spec: chapter 4 rebuilds nothing, so its Redis
		// deletes cleanly too, and the spec fails against it only because
		// no pod comes back. Chapter 5's mutant
		// keeps-the-redis-for-its-pods (a pod rebuilt while its Redis
		// goes) shows that it can fail.
		It("does not stop the Redis from being deleted, leaving nothing behind", func(ctx SpecContext) {
			expectRedisDeletionLeavesNothing(ctx, e, ns)
		})
	})
}

// ScaleSpec proves the scaling of chapter 6, which every later chapter
// keeps: kubectl scale deletes the highest pods going down and creates
// new ones going up.
func ScaleSpec(in SpecInput) bool {
	checkEnv("ScaleSpec", in.Env)
	return Describe("kubectl scale", func() {
		e := in.Env
		var ns string

		BeforeEach(func(ctx SpecContext) { ns = newCache(ctx, e, in.RecordsPods) })

		It("deletes the highest pods going down, and creates new ones going up", lessonIf(in.Lesson), func(ctx SpecContext) {
			expectScaleDownAndUp(ctx, e, ns)
			if in.RecordsPods {
				Eventually(e.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(HaveLen(4))
			}
			if in.SaysRebuilt {
				By("the pods that the scale-up created again are not called rebuilt")
				Eventually(e.EventNotes).WithContext(ctx).WithArguments(ns, "Redis", "cache").
					Should(ContainElement("SuccessfulCreate: Created pod cache-3"))
				Consistently(e.EventNotes).WithContext(ctx).WithArguments(ns, "Redis", "cache").
					ShouldNot(ContainElement(HavePrefix("SuccessfulRebuild")), "a pod created by a scale-up was called a rebuild")
			}
		})

		// Never a lesson spec: chapter 5, which creates every missing pod
		// too, passes it. Chapter 6's mutant one-pod-per-pass (the
		// learner's controller of the series, seed 004, creates one pod
		// per pass) shows that it can fail.
		It("creates the pods after one whose name another pod took", func(ctx SpecContext) {
			expectScaleUpPastTakenName(ctx, e, ns)
		})

		if !in.RecordsPods {
			return
		}
		It("forgets the pods beyond its replicas once they are gone", lessonIf(in.Lesson), func(ctx SpecContext) {
			// Whoever deletes them: chapter 5 does not scale down, so the
			// setup deletes what is still there by hand; chapter 6 has
			// usually deleted them first.
			By("scaling down to 1, and deleting cache-1 and cache-2 if they are still there")
			e.MustKubectl(ctx, "scale", "redis/cache", "--replicas=1", "-n", ns)
			e.MustKubectl(ctx, "delete", "pod", "cache-1", "cache-2", "-n", ns, "--ignore-not-found")
			Eventually(e.PodNamesFunc(ctx, ns, "cache")).WithContext(ctx).Should(Equal([]string{"cache-0"}))

			LessonStep("the Redis records only cache-0")
			DecidingCheck("the Redis' one finalizer is cache-0's", func() {
				Eventually(e.Finalizers).WithContext(ctx).WithArguments(ns, "cache").Should(ConsistOf(myappv1.GroupName+"/cache-0"),
					"the Redis still records the pods beyond its replicas")
			})
		})
	})
}

// StatusSpec proves the status of chapter 6, which every later chapter
// keeps: it counts the ready pods, says Available, follows a change of
// replicas, and is not written when nothing changed.
func StatusSpec(in SpecInput) bool {
	checkEnv("StatusSpec", in.Env)
	return Describe("A Redis' status", func() {
		e := in.Env
		var ns string

		BeforeEach(func(ctx SpecContext) { ns = newCache(ctx, e, false) })

		It("counts the ready pods, is Available once all are, and shows in kubectl get", lessonIf(in.Lesson), func(ctx SpecContext) {
			expectStatusShowsReadyPods(ctx, e, ns)
		})

		// Never a lesson spec: chapter 5 has no status, so the one red it
		// can show is the spec before's. Chapter 6's mutant
		// keeps-first-generation (a status that keeps the generation it
		// first observed) shows that it can fail.
		It("follows a scale-down, and becomes Available again", func(ctx SpecContext) {
			expectStatusFollowsScaleDown(ctx, e, ns)
		})

		// Never a lesson spec: chapter 5 has no status. The bug it
		// catches, a status that counts every pod that exists (or runs)
		// as ready, passes every other spec on the local back-end, where
		// pods are Ready as soon as they run.
		It("counts a pod whose Ready condition is False out, until it is ready again", func(ctx SpecContext) {
			expectNotReadyPodCountedOut(ctx, e, ns)
		})

		It("is not written while nothing changes: reconciling a steady Redis sends no write", Serial, func(ctx SpecContext) {
			expectNoWriteWhenSteady(ctx, e, ns)
		})
	})
}

// SteadySpec proves that the operator leaves a Redis alone once it is
// as its spec says (chapter 6 on): a reconcile that finds nothing to do
// asks for no other; the watches bring the next change.
func SteadySpec(in SpecInput) bool {
	checkEnv("SteadySpec", in.Env)
	return Describe("A steady Redis", func() {
		// Never a lesson spec: no chapter requeues a steady Redis. Chapter
		// 6's mutant requeues-always (the learner's controller of the
		// series, seed 004, returns Requeue: true from every pass) shows
		// that it can fail.
		It("is reconciled when it changes, and not requeued after: the watches bring the next change", func(ctx SpecContext) {
			expectNoRequeueWhenSteady(ctx, in.Env, newCache(ctx, in.Env, false))
		})
	})
}

// EndedPodSpec proves that a pod that ended is replaced (chapter 6 on).
func EndedPodSpec(in SpecInput) bool {
	checkEnv("EndedPodSpec", in.Env)
	return Describe("A pod that ended (phase Failed, as after an eviction)", func() {
		It("is replaced", lessonIf(in.Lesson), func(ctx SpecContext) {
			expectEndedPodReplaced(ctx, in.Env, newCache(ctx, in.Env, false))
		})
	})
}

// ForeignPodSpec proves that deleting a Redis leaves alone a pod that
// took the name of one of its pods and that it does not control (chapter
// 3 on). Serial: it stops the operator.
func ForeignPodSpec(in SpecInput) bool {
	checkEnv("ForeignPodSpec", in.Env)
	return Describe("A Redis", func() {
		It("leaves alone, when deleted, a pod that took the name of one of its pods and that it does not control", Serial, lessonIf(in.Lesson), func(ctx SpecContext) {
			e := in.Env
			expectForeignPodSurvivesRedisDeletion(ctx, e, e.NewNamespace(ctx))
		})
	})
}
