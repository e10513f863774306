package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSameMarkers(t *testing.T) {
	write := func(dir, name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const pods = "// +kubebuilder:rbac:groups=\"\",resources=pods,verbs=get;list;watch;create\n"
	const redis = "// +kubebuilder:rbac:groups=myapp.example.com,resources=redis,verbs=get;list;watch\n"
	tests := []struct {
		name           string
		chapter, other map[string]string
		want           bool
	}{
		{"the same markers, the code changed", map[string]string{"a.go": pods + redis + "package a\nfunc f() {}\n"},
			map[string]string{"a.go": redis + pods + "package a\nfunc f() { panic(1) }\n"}, true},
		{"the same markers in another file", map[string]string{"a.go": pods, "b.go": redis},
			map[string]string{"a.go": pods + redis}, true},
		{"a verb more", map[string]string{"a.go": pods},
			map[string]string{"a.go": "// +kubebuilder:rbac:groups=\"\",resources=pods,verbs=get;list;watch;create;delete\n"}, false},
		{"a marker less", map[string]string{"a.go": pods + redis}, map[string]string{"a.go": pods}, false},
		{"a webhook marker more", map[string]string{"a.go": pods},
			map[string]string{"a.go": pods + "// +kubebuilder:webhook:path=/validate,mutating=false\n"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &variant{chapterDir: t.TempDir(), dir: t.TempDir()}
			for name, text := range tt.chapter {
				write(v.chapterDir, name, text)
				v.chapterFiles = append(v.chapterFiles, name)
			}
			for name, text := range tt.other {
				write(v.dir, name, text)
				v.files = append(v.files, name)
			}
			got, err := sameMarkers(v)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("sameMarkers = %v, want %v", got, tt.want)
			}
		})
	}
}
