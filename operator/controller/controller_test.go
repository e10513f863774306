package controller

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestShippedChapterIsTheMakefiles: the operator runs without
// OPERATOR_CHAPTER the chapter whose role and webhook configuration make
// manifests copies into config/.
func TestShippedChapterIsTheMakefiles(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("\nSHIPPED_CHAPTER := %d\n", ShippedChapter); !strings.Contains(string(makefile), want) {
		t.Errorf("the Makefile does not say %q", strings.TrimSpace(want))
	}
}

func TestChaptersAreNumberedInOrder(t *testing.T) {
	for i, c := range Chapters {
		if c.Number != i+1 {
			t.Errorf("Chapters[%d] is chapter %d, want %d", i, c.Number, i+1)
		}
		if c.NewManager == nil {
			t.Errorf("chapter %d has no NewManager", c.Number)
		}
	}
}

// TestSelected: $OPERATOR_CHAPTER names the chapter, the shipped one runs
// without it, and a value that names no chapter is an error, never the
// shipped chapter.
func TestSelected(t *testing.T) {
	tests := []struct {
		env     string
		want    string
		wantErr bool
	}{
		{env: "", want: "faults"},
		{env: strconv.Itoa(Latest().Number), want: Latest().Slug},
		{env: "5", want: "rebuild-pods"},
		{env: "1", want: "create-pods"},
		{env: "0", wantErr: true},
		{env: "-1", wantErr: true},
		{env: strconv.Itoa(len(Chapters) + 1), wantErr: true},
		{env: "five", wantErr: true},
		{env: " 5", wantErr: true},
	}
	for _, tt := range tests {
		t.Run("OPERATOR_CHAPTER="+tt.env, func(t *testing.T) {
			t.Setenv(EnvChapter, tt.env)
			c, err := selected()
			if tt.wantErr {
				want := "OPERATOR_CHAPTER: the chapter must be a number from 1 to " + strconv.Itoa(len(Chapters)) + `, got "` + tt.env + `"`
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
