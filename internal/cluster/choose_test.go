package cluster

import (
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	for _, asked := range []string{Kind, Local, Existing} {
		got, reason, err := Choose(t.Context(), asked)
		if err != nil || got != asked || reason != "CLUSTER="+asked {
			t.Errorf("Choose(%q) = %q, %q, %v; want it as asked", asked, got, reason, err)
		}
	}
	if _, _, err := Choose(t.Context(), "minikube"); err == nil || !strings.Contains(err.Error(), "minikube") {
		t.Errorf("Choose(minikube): want an error naming it, got %v", err)
	}
}

func TestChooseAutoWithoutDocker(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no docker command
	for _, asked := range []string{"", "auto"} {
		got, reason, err := Choose(t.Context(), asked)
		if err != nil || got != Local || !strings.Contains(reason, "docker") {
			t.Errorf("Choose(%q) without Docker = %q, %q, %v; want local with the reason", asked, got, reason, err)
		}
	}
}
