package controller

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	myappv1 "example.com/redis-operator/api/v1"
)

// The validating webhook, called by the API server on every create and
// update of a Redis, before the Redis is stored:
//   - failurePolicy=ignore: when no replica answers, the API server admits
//     the Redis anyway. The webhook only refuses earlier what the
//     reconciler already refuses to do (take over a pod it did not
//     create), so a webhook that is down must not stop anyone from
//     creating a Redis.
//   - timeoutSeconds=5: how long a write of a Redis may wait on a webhook
//     that hangs. An answer takes a few Gets, milliseconds.
//   - verbs=create;update, not delete: a webhook that is down must never
//     stand between a user and a delete.
//   - matchConditions: an update of a Redis that is being deleted, such as
//     removing a finalizer, is not sent to the webhook at all.
//
// +kubebuilder:webhook:path=/validate-myapp-example-com-v1-redis,mutating=false,failurePolicy=ignore,timeoutSeconds=5,sideEffects=None,groups=myapp.example.com,resources=redis,verbs=create;update,versions=v1,name=vredis-v1.myapp.example.com,admissionReviewVersions=v1,serviceName=redis-operator-webhook-service,serviceNamespace=redis-operator-system,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`

// RedisValidator checks what the Redis CRD's CEL rules cannot see: other
// objects. A Redis named cache needs the pod names cache-0, cache-1, ...;
// a pod that already has one of those names and that no Redis named cache
// controls would never be replaced (the reconciler does not take over what
// it did not create), so the Redis would run short of pods for good.
type RedisValidator struct {
	// Reader reads pods from the API server: the manager's cache holds
	// only the operator's own pods, and a name may be held by anyone's.
	Reader client.Reader
}

var _ admission.Validator[*myappv1.Redis] = &RedisValidator{}

// SetupWebhookWithManager serves the validator on the manager's webhook
// server, which then starts with the manager, on every replica: the
// webhook needs no Lease, so every replica answers.
func SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &myappv1.Redis{}).
		WithValidator(&RedisValidator{Reader: mgr.GetAPIReader()}).
		Complete()
}

// ValidateCreate refuses a Redis whose pod names are taken by pods that no
// Redis of its name controls, naming them: the API server answers the
// create with "admission webhook ... denied the request:" and the error's
// text. A name held by a pod that is going away is only a warning: the
// operator creates its own pod once the name is free.
func (v *RedisValidator) ValidateCreate(ctx context.Context, redis *myappv1.Redis) (admission.Warnings, error) {
	taken, warnings := v.podsInTheWay(ctx, redis, 0, redis.Spec.Replicas)
	if len(taken) == 0 {
		return warnings, nil
	}
	if len(taken) == 1 {
		return warnings, fmt.Errorf("pod %s already exists and no Redis named %q controls it: the operator never takes over a pod it did not create, so this Redis would never get it; delete that pod, or choose another name", taken[0], redis.Name)
	}
	return warnings, fmt.Errorf("pods %s already exist and no Redis named %q controls them: the operator never takes over a pod it did not create, so this Redis would never get them; delete those pods, or choose another name", join(taken), redis.Name)
}

// ValidateUpdate warns, and never refuses, when more replicas ask for
// names that other pods hold: the Redis exists already and its other pods
// are fine, so refusing would be too strong; the operator creates the
// missing pods once the names are free.
func (v *RedisValidator) ValidateUpdate(ctx context.Context, oldRedis, redis *myappv1.Redis) (admission.Warnings, error) {
	if redis.Spec.Replicas <= oldRedis.Spec.Replicas {
		return nil, nil
	}
	taken, warnings := v.podsInTheWay(ctx, redis, oldRedis.Spec.Replicas, redis.Spec.Replicas)
	for _, name := range taken {
		warnings = append(warnings, fmt.Sprintf("pod %s exists and no Redis named %q controls it: the operator does not create %s while it is there", name, redis.Name, name))
	}
	return warnings, nil
}

// ValidateDelete is never called: the webhook is not registered for
// deletes (see the marker above).
func (v *RedisValidator) ValidateDelete(context.Context, *myappv1.Redis) (admission.Warnings, error) {
	return nil, nil
}

// podsInTheWay looks at the pods named like the Redis' pods from index
// from to index to-1. It returns the names held by pods that no Redis of
// this name controls, and a warning for each pod that will free its name
// by itself: one being deleted, or one that an earlier Redis of this name,
// since deleted, still controls until the garbage collector removes it;
// and one for each pod it could not read.
func (v *RedisValidator) podsInTheWay(ctx context.Context, redis *myappv1.Redis, from, to int32) (taken []string, warnings admission.Warnings) {
	for i := from; i < to; i++ {
		name := PodName(redis, i)
		pod := &corev1.Pod{}
		if err := v.Reader.Get(ctx, client.ObjectKey{Namespace: redis.Namespace, Name: name}, pod); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			// As when no replica answers (failurePolicy=ignore): admit,
			// since the reconciler still guards the pod, and say so.
			warnings = append(warnings, fmt.Sprintf("pod %s was not checked: %v", name, err))
			continue
		}
		owner := metav1.GetControllerOf(pod)
		ownedByName := owner != nil && owner.Kind == "Redis" && owner.Name == redis.Name &&
			strings.HasPrefix(owner.APIVersion, myappv1.GroupVersion.Group+"/")
		switch {
		case ownedByName && owner.UID == redis.UID:
			// This Redis' own pod.
		case ownedByName:
			warnings = append(warnings, fmt.Sprintf("pod %s still belongs to an earlier Redis named %q: the operator creates this Redis' pod once the garbage collector has deleted it", name, redis.Name))
		case pod.DeletionTimestamp != nil:
			warnings = append(warnings, fmt.Sprintf("pod %s is being deleted: the operator creates this Redis' pod once it is gone", name))
		default:
			taken = append(taken, name)
		}
	}
	return taken, warnings
}

// join lists names as "a", "a and b" or "a, b and c".
func join(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
