package controller

import (
	"strconv"
	"strings"
	"testing"

	"example.com/redis-operator/chapters"
)

// TestEveryChapterHasItsManager: the operator runs every chapter of the
// table, and none that is not in it.
func TestEveryChapterHasItsManager(t *testing.T) {
	for _, c := range chapters.All {
		if managers[c.Number] == nil {
			t.Errorf("chapter %d has no NewManager", c.Number)
		}
	}
	if len(managers) != len(chapters.All) {
		t.Errorf("%d NewManagers for %d chapters", len(managers), len(chapters.All))
	}
}

// TestSelected: $OPERATOR_CHAPTER names the chapter, the shipped one runs
// without it, and a value that names no chapter is an error, never the
// shipped chapter.
func TestSelected(t *testing.T) {
	latest := chapters.Latest()
	shipped, err := chapters.Get(chapters.Shipped)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		env     string
		want    string
		wantErr bool
	}{
		{env: "", want: shipped.Slug},
		{env: strconv.Itoa(latest.Number), want: latest.Slug},
		{env: "5", want: "rebuild-pods"},
		{env: "05", want: "rebuild-pods"},
		{env: "1", want: "create-pods"},
		{env: "0", wantErr: true},
		{env: "-1", wantErr: true},
		{env: strconv.Itoa(len(chapters.All) + 1), wantErr: true},
		{env: "five", wantErr: true},
		{env: " 5", wantErr: true},
	}
	for _, tt := range tests {
		t.Run("OPERATOR_CHAPTER="+tt.env, func(t *testing.T) {
			t.Setenv(chapters.EnvChapter, tt.env)
			c, err := selected()
			if tt.wantErr {
				want := "OPERATOR_CHAPTER: a chapter is a number from 1 to " + strconv.Itoa(len(chapters.All)) + `, got "` + tt.env + `"`
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("selected() = %d, %v; want the error %q", c.Number, err, want)
				}
				return
			}
			if err != nil || c.Slug != tt.want {
				t.Errorf("selected() = %q, %v; want %q", c.Slug, err, tt.want)
			}
		})
	}
}
