// Package v1 contains the v1 API of the myapp.example.com group: the Redis
// custom resource that every chapter's operator reconciles.
//
// +kubebuilder:object:generate=true
// +groupName=myapp.example.com
package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of the Redis resource; it also qualifies the
// operator's finalizers.
const GroupName = "myapp.example.com"

var (
	// GroupVersion is the group and version of every type in this package;
	// the operator registers it and uses it to recognise its own owner
	// references.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

	// SchemeBuilder registers this package's types with a runtime.Scheme.
	// It is apimachinery's, as in Kubernetes' own API packages, so that
	// importing the API does not pull in controller-runtime.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package's types to a scheme, so that clients can
	// encode and decode them.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers the Redis kinds under GroupVersion, with the
// meta types (ListOptions and the like) that every group version carries.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Redis{}, &RedisList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
