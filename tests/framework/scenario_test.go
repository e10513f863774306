package framework

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Two runs' pods differ in their node and their token volume's name, and
// in nothing else that the operator wrote; a change it wrote shows.
func TestPodSpecAsWritten(t *testing.T) {
	pod := func(node, token, image string) corev1.PodSpec {
		mounts := []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: token, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}}
		return corev1.PodSpec{
			NodeName:   node,
			Volumes:    []corev1.Volume{{Name: "data"}, {Name: token}},
			Containers: []corev1.Container{{Name: "redis", Image: image, VolumeMounts: mounts}},
		}
	}
	a, err := podSpecAsWritten(pod("hollow-node-1", "kube-api-access-abcde", "redis:7"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := podSpecAsWritten(pod("hollow-node-3", "kube-api-access-vwxyz", "redis:7"))
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("two runs' pods differ:\n%s\n%s", a, b)
	}
	if !strings.Contains(a, `"data"`) || strings.Contains(a, "kube-api-access") || strings.Contains(a, "hollow-node") {
		t.Errorf("what the operator wrote is not all kept, or what it did not write is: %s", a)
	}
	c, err := podSpecAsWritten(pod("hollow-node-1", "kube-api-access-abcde", "redis:8"))
	if err != nil {
		t.Fatal(err)
	}
	if c == a {
		t.Error("another image does not show")
	}
}
