package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// MaxReplicas bounds spec.replicas. A tutorial operator that can be asked
	// for a million pods with one typo is a hazard, and the bound keeps every
	// pod index short enough for the name limit below.
	MaxReplicas = 10

	// MaxNameLength bounds metadata.name so that "<name>-<index>" is always a
	// valid pod name and the name part of a per-pod finalizer
	// ("myapp.example.com/<name>-<index>") stays within the 63 characters a
	// qualified name allows: 60 + len("-9") = 62.
	MaxNameLength = 60

	// DefaultImage is the container image of a Redis pod when spec.image is
	// empty. Offline, `make kind-node-image` provides an image of this name
	// built from Debian bookworm's redis-server package, which is Redis 7.0.
	DefaultImage = "redis:7.0"
)

// RedisSpec is what the user asks for.
type RedisSpec struct {
	// Replicas is how many pods the operator keeps, named <name>-0 to
	// <name>-(replicas-1).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +kubebuilder:default=1
	// +optional
	Replicas int32 `json:"replicas"`

	// Image is the container image the pods run.
	// +kubebuilder:default="redis:7.0"
	// +kubebuilder:validation:MinLength=1
	// +optional
	Image string `json:"image,omitempty"`
}

// RedisStatus is what the operator observed. Chapters 1 to 5 leave it
// empty; chapter 6 fills it. The subresources exist from the start so that
// the CRD does not change shape between chapters.
type RedisStatus struct {
	// Replicas is the number of pods that exist for this Redis and are not
	// being deleted.
	// +optional
	Replicas int32 `json:"replicas"`

	// ReadyReplicas is the number of those pods that are Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// ObservedGeneration is the metadata.generation of the Redis that this
	// status describes; when it is behind, the status is about an older spec.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Selector is the label selector of the Redis' pods, in the string form
	// of `kubectl get pods -l`. The scale subresource reads it, so that
	// `kubectl scale` and a HorizontalPodAutoscaler can find the pods.
	// +optional
	Selector string `json:"selector,omitempty"`

	// Conditions describe the latest observations of the Redis' state:
	// Available (every desired pod is Ready) and Progressing (pods are being
	// created, deleted or waited for).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Redis asks the operator for a set of Redis pods.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`,description="spec.replicas: the pods asked for"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyReplicas`,description="status.readyReplicas: the pods that are Ready"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 60",message="metadata.name must be at most 60 characters, so that <name>-<index> is a valid pod name and finalizer"
type Redis struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec RedisSpec `json:"spec,omitempty"`
	// +optional
	Status RedisStatus `json:"status,omitempty"`
}

// RedisList is a list of Redis objects; clients and informers need it.
//
// +kubebuilder:object:root=true
type RedisList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Redis `json:"items"`
}
