// Package fakeapi is the API server of the chapters' unit tests:
// controller-runtime's fake client, made to answer as a real API server
// does where the tests depend on it, and a cache that lags behind it.
//
// Like an API server, the fake client refuses a second object of the same
// name (AlreadyExists) and an optimistically locked patch of a stale
// object (Conflict), and keeps finalizers: Delete only sets the
// deletionTimestamp of an object that has some. Unlike one, it sets no
// UID and ignores a UID precondition on Delete; New adds both. It still
// has no admission, no CRD defaulting or validation, no RBAC, no garbage
// collector and no kubelet: the end-to-end suites prove those parts.
package fakeapi

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	myappv1 "example.com/redis-operator/api/v1"
)

// New returns a fake API server that holds objs and knows the built-in
// kinds and the Redis. Like the CRD, the Redis has a status subresource:
// a write of the object leaves the status alone, and Status().Patch the
// rest. Every object it creates gets a new UID (uid-created-1, -2, …), so
// that a pod created again can be told from the one it replaces, and a
// Delete whose UID precondition does not match the object fails with a
// Conflict.
func New(objs ...client.Object) client.WithWatch {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(myappv1.AddToScheme(scheme))
	created := 0
	return fake.NewClientBuilder().
		WithScheme(scheme).
		WithObjects(objs...).
		WithStatusSubresource(&myappv1.Redis{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				created++
				obj.SetUID(types.UID(fmt.Sprintf("uid-created-%d", created)))
				return c.Create(ctx, obj, opts...)
			},
			Delete: checkUIDPrecondition,
		}).
		Build()
}

// checkUIDPrecondition refuses, as the API server does, a Delete whose UID
// precondition names another object than the one of that name.
func checkUIDPrecondition(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	o := &client.DeleteOptions{}
	o.ApplyOptions(opts)
	if o.Preconditions != nil && o.Preconditions.UID != nil {
		current := obj.DeepCopyObject().(client.Object)
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), current); err != nil {
			return err
		}
		if current.GetUID() != *o.Preconditions.UID {
			gvk, err := c.GroupVersionKindFor(obj)
			if err != nil {
				return err
			}
			gr := schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind) + "s"}
			return apierrors.NewConflict(gr, obj.GetName(), fmt.Errorf( //nolint:staticcheck // ST1005: the API server's wording
				"Precondition failed: UID in precondition: %s, UID in object meta: %s", *o.Preconditions.UID, current.GetUID()))
		}
	}
	return c.Delete(ctx, obj, opts...)
}

// CacheWithout returns a client that reads like a cache which has not seen
// the named pods yet: Get says NotFound for them, and List leaves them out.
// Everything else, writes included, goes to the API server.
func CacheWithout(api client.WithWatch, pods ...string) client.Client {
	return laggingCache(api, pods, nil)
}

// CacheShowing returns a client that reads like a cache which still shows
// the given pods as they were, whatever the API server has now under their
// names. Everything else, writes included, goes to the API server.
func CacheShowing(api client.WithWatch, stale ...corev1.Pod) client.Client {
	return laggingCache(api, nil, stale)
}

func laggingCache(api client.WithWatch, unseen []string, stale []corev1.Pod) client.Client {
	staleByName := map[string]corev1.Pod{}
	for _, pod := range stale {
		staleByName[pod.Name] = pod
	}
	return interceptor.NewClient(api, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if pod, isPod := obj.(*corev1.Pod); isPod {
				if slices.Contains(unseen, key.Name) {
					return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
				}
				if old, ok := staleByName[key.Name]; ok && old.Namespace == key.Namespace {
					old.DeepCopyInto(pod)
					return nil
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			podList, isPods := list.(*corev1.PodList)
			if !isPods {
				return nil
			}
			o := &client.ListOptions{}
			o.ApplyOptions(opts)
			podList.Items = slices.DeleteFunc(podList.Items, func(p corev1.Pod) bool {
				_, isStale := staleByName[p.Name]
				return isStale || slices.Contains(unseen, p.Name)
			})
			for _, old := range stale {
				if (o.Namespace == "" || o.Namespace == old.Namespace) &&
					(o.LabelSelector == nil || o.LabelSelector.Matches(labels.Set(old.Labels))) {
					podList.Items = append(podList.Items, *old.DeepCopy())
				}
			}
			return nil
		},
	})
}
