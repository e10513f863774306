package docs

import (
	"slices"
	"testing"
)

func TestConsoleSteps(t *testing.T) {
	block := "$ kubectl apply -f redis.yaml\nredis.myapp.example.com/cache created\n$ make run 2 &> operator.log &\n$ kubectl get pods \\\n    -o name\npod/cache-0\n"
	steps, err := ConsoleSteps(block)
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{
		{Command: "kubectl apply -f redis.yaml", Want: []string{"redis.myapp.example.com/cache created"}},
		{Command: "make run 2 &> operator.log &"},
		{Command: "kubectl get pods \\\n    -o name", Want: []string{"pod/cache-0"}},
	}
	if !slices.EqualFunc(steps, want, func(a, b Step) bool { return a.Command == b.Command && slices.Equal(a.Want, b.Want) }) {
		t.Errorf("got %q\nwant %q", steps, want)
	}
	if _, err := ConsoleSteps("output first\n$ ls\n"); err == nil {
		t.Error("output before the first command: no error")
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
		got  string
		ok   bool
	}{
		{"empty", nil, "", true},
		{"empty wants nothing", nil, "something\n", false},
		{"exact", []string{"a b"}, "a b\n", true},
		{"blank lines at the end do not count", []string{"a", ""}, "a\n\n\n", true},
		{"columns", []string{"NAME READY", "cache-0 1/1"}, "NAME      READY\ncache-0   1/1  \n\n", true},
		{"space is not optional", []string{"a b"}, "ab\n", false},
		{"wildcard in a line", []string{"cache-0 Running …"}, "cache-0   Running   12s\n", true},
		{"wildcard stays in its line", []string{"a …", "c"}, "a b\nx\nc\n", false},
		{"wildcard line: none", []string{"a", "…", "c"}, "a\nc\n", true},
		{"wildcard line: many", []string{"a", "…", "c"}, "a\nb1\nb2\nc\n", true},
		{"wildcard line at the end", []string{"a", "…"}, "a\nb\nc", true},
		{"missing line", []string{"a", "b"}, "a\n", false},
		{"extra line", []string{"a"}, "a\nb\n", false},
		{"regexp characters are literal", []string{`{.metadata.uid}`}, "{.metadata.uid}\n", true},
		{"regexp characters are literal, not patterns", []string{`a.c`}, "abc\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Match(tc.want, tc.got); got != tc.ok {
				t.Errorf("Match(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
			}
		})
	}
}

func TestParse(t *testing.T) {
	src := "# Title\n\nSee [chapter 2](../02/README.md), ![a picture](p.png) and <https://example.com>, and run `make\ntest`.\n\n## Try it\n\n```console\n$ ls\n```\n\n### Deeper\n\n```sh\nmake run 1\n```\n\n## After\n\n```sh\nmake clean\n```\n"
	d := Parse([]byte(src))
	if got := len(d.Sections); got != 4 || d.Sections[1] != (Section{Level: 2, Title: "Try it"}) {
		t.Errorf("sections: %+v", d.Sections)
	}
	if !slices.Equal(d.Spans, []string{"make test"}) || !slices.Equal(d.Links, []string{"../02/README.md", "p.png", "https://example.com"}) {
		t.Errorf("spans %q, links %q", d.Spans, d.Links)
	}
	blocks, err := d.SectionBlocks("Try it")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 2 || blocks[0].Lang != "console" || blocks[0].Text != "$ ls\n" || blocks[1].Text != "make run 1\n" {
		t.Errorf("Try it blocks: %+v", blocks)
	}
	if _, err := d.SectionBlocks("Missing"); err == nil {
		t.Error("no error for a missing section")
	}
}
