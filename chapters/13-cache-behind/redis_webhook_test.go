package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	myappv1 "example.com/redis-operator/api/v1"
)

// The validator without a cluster: what it refuses and warns about, given
// the pods that exist. The suite shows the API server calling it.

func webhookRedis(replicas int32) *myappv1.Redis {
	return &myappv1.Redis{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cache", UID: "new-uid"},
		Spec:       myappv1.RedisSpec{Replicas: replicas, Image: myappv1.DefaultImage},
	}
}

// testPod is pod name in ns, controlled by the Redis named owner with uid
// (no controller when owner is empty), being deleted when deleting is set.
func testPod(name, owner string, uid types.UID, deleting bool) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if owner != "" {
		pod.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: myappv1.GroupVersion.String(), Kind: "Redis", Name: owner, UID: uid, Controller: ptr.To(true),
		}}
	}
	if deleting {
		now := metav1.Now()
		pod.DeletionTimestamp = &now
		pod.Finalizers = []string{"example.com/keep"} // the fake client needs one to keep a deleted object
	}
	return pod
}

func validatorWith(pods ...client.Object) *RedisValidator {
	return &RedisValidator{Reader: fake.NewClientBuilder().WithObjects(pods...).Build()}
}

func TestValidateCreate(t *testing.T) {
	for _, tt := range []struct {
		name         string
		pods         []client.Object
		wantErr      []string // each in the error; none: admitted
		wantWarnings []string // each in one warning, in order
	}{
		{name: "no pods", pods: nil},
		{name: "pods of other names", pods: []client.Object{testPod("cache-3", "", "", false), testPod("db-0", "", "", false)}},
		{
			name:    "one pod in the way",
			pods:    []client.Object{testPod("cache-1", "", "", false)},
			wantErr: []string{"pod cache-1 already exists", `no Redis named "cache" controls it`, "delete that pod, or choose another name"},
		},
		{
			name:    "pods in the way, one of another Redis",
			pods:    []client.Object{testPod("cache-0", "", "", false), testPod("cache-2", "other", "other-uid", false)},
			wantErr: []string{"pods cache-0 and cache-2 already exist", "controls them"},
		},
		{
			name:         "a pod of an earlier Redis of the name, and one being deleted",
			pods:         []client.Object{testPod("cache-0", "cache", "old-uid", false), testPod("cache-1", "", "", true)},
			wantWarnings: []string{"pod cache-0 still belongs to an earlier Redis", "pod cache-1 is being deleted"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			warnings, err := validatorWith(tt.pods...).ValidateCreate(context.Background(), webhookRedis(3))
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatalf("refused: %v", err)
			}
			for _, want := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v does not say %q", err, want)
				}
			}
			if len(warnings) != len(tt.wantWarnings) {
				t.Fatalf("warnings %q, want %d", warnings, len(tt.wantWarnings))
			}
			for i, want := range tt.wantWarnings {
				if !strings.Contains(warnings[i], want) {
					t.Errorf("warning %q does not say %q", warnings[i], want)
				}
			}
		})
	}
}

// TestValidateUpdate: an update is never refused; growing into a name
// another pod holds is a warning, and only the new names are read.
func TestValidateUpdate(t *testing.T) {
	v := validatorWith(testPod("cache-0", "", "", false), testPod("cache-2", "", "", false))
	old := webhookRedis(1)
	for _, tt := range []struct {
		replicas int32
		want     []string
	}{
		{1, nil},
		{0, nil},
		{2, nil},
		{3, []string{"pod cache-2 exists and no Redis named \"cache\" controls it"}},
	} {
		warnings, err := v.ValidateUpdate(context.Background(), old, webhookRedis(tt.replicas))
		if err != nil {
			t.Errorf("1 to %d replicas: refused: %v", tt.replicas, err)
		}
		if len(warnings) != len(tt.want) {
			t.Errorf("1 to %d replicas: warnings %q, want %q", tt.replicas, warnings, tt.want)
			continue
		}
		for i, want := range tt.want {
			if !strings.Contains(warnings[i], want) {
				t.Errorf("1 to %d replicas: warning %q does not say %q", tt.replicas, warnings[i], want)
			}
		}
	}
}

// TestValidateCreateReadError: a pod that cannot be read is not a reason
// to refuse; the Redis is admitted, as when no replica answers, with a
// warning that names the pod.
func TestValidateCreateReadError(t *testing.T) {
	v := &RedisValidator{Reader: fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("connection refused")
		},
	}).Build()}
	warnings, err := v.ValidateCreate(context.Background(), webhookRedis(1))
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "pod cache-0 was not checked: connection refused") {
		t.Errorf("warnings %q, want one that pod cache-0 was not checked", warnings)
	}
}
