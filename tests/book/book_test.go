//go:build book

// Package book checks the web book that make book builds, in a real
// browser: Debian's Chromium, driven over the DevTools protocol
// (chromedp). make check-book runs it.
package book

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"
)

// page is a page of the book, as make book lists it in pages.json.
type page struct {
	Lang    string `json:"lang"`
	Path    string `json:"path"`
	Title   string `json:"title"`
	Chapter int    `json:"chapter"`
}

func setup(t *testing.T) (dir string, pages []page) {
	t.Helper()
	dir = os.Getenv("BOOK_DIR")
	if dir == "" {
		t.Fatal("BOOK_DIR is not set: run make check-book")
	}
	data, err := os.ReadFile(filepath.Join(dir, "pages.json"))
	if err != nil {
		t.Fatalf("no book in %s (make book builds it): %v", dir, err)
	}
	if err := json.Unmarshal(data, &pages); err != nil {
		t.Fatal(err)
	}
	return dir, pages
}

// Every link of every page of the book, the source views included,
// leads to a file of the book, and its anchor to an element of that
// page; a link that leaves the book goes to another site. No page shows
// a diagram's Mermaid source in place of the diagram.
func TestEveryLinkResolves(t *testing.T) {
	dir, _ := setup(t)
	ids := map[string]map[string]bool{} // page -> its ids
	links := map[string][]string{}      // page -> its hrefs and srcs
	var mermaid []string                // pages that show a diagram's source
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		doc, err := html.Parse(f)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		ids[rel] = map[string]bool{}
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode {
				for _, a := range n.Attr {
					switch {
					case a.Key == "class" && n.Data == "code" && strings.Contains(a.Val, "language-mermaid"):
						mermaid = append(mermaid, rel)
					case a.Key == "id":
						ids[rel][a.Val] = true
					case (a.Key == "href" || a.Key == "src") && n.Data != "svg" && !strings.HasPrefix(n.Namespace, "svg"):
						links[rel] = append(links[rel], a.Val)
					}
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mermaid {
		t.Errorf("%s shows a Mermaid diagram's source, not the diagram", p)
	}
	checked := 0
	for from, hrefs := range links {
		for _, href := range hrefs {
			u, err := url.Parse(href)
			if err != nil {
				t.Errorf("%s: a link that is no URL: %q", from, href)
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				if u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "mailto" && href != "data:," {
					t.Errorf("%s: a link to %q", from, href)
				}
				continue
			}
			target := from
			if u.Path != "" {
				target = path.Clean(path.Join(path.Dir(from), u.Path))
			}
			if strings.HasPrefix(target, "../") {
				t.Errorf("%s: %q leaves the book", from, href)
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, target)); err != nil {
				t.Errorf("%s: %q leads nowhere: no %s in the book", from, href, target)
				continue
			}
			if u.Fragment != "" && strings.HasSuffix(target, ".html") && !ids[target][u.Fragment] {
				t.Errorf("%s: %q: %s has no element with the id %q", from, href, target, u.Fragment)
			}
			checked++
		}
	}
	t.Logf("%d internal links and anchors of %d pages resolve", checked, len(ids))
}

// browser is a headless Chromium with what it saw go wrong: console
// errors, exceptions, failed requests.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func (b *browser) saw(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, fmt.Sprintf(format, args...))
}

// takeErrors returns what went wrong since the last call.
func (b *browser) takeErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.errors
	b.errors = nil
	return e
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		t.Fatal("CHROMIUM is not set: run make check-book")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // root, and pages of our own
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1280, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithListener(b.listen))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b.ctx = ctx
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return b
}

// listen notes what goes wrong on the page: it runs in the tab's loop,
// and must return at once.
func (b *browser) listen(ev any) {
	{
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value))
				}
				b.saw("console error: %s", strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			b.saw("exception: %s", ev.ExceptionDetails.Text)
		case *network.EventLoadingFailed:
			b.saw("request failed: %s", ev.ErrorText)
		case *network.EventResponseReceived:
			if ev.Response.Status >= 400 {
				b.saw("%s answered %d", ev.Response.URL, int(ev.Response.Status))
			}
		case *network.EventRequestWillBeSent:
			if u, err := url.Parse(ev.Request.URL); err == nil && u.Hostname() != "127.0.0.1" && u.Scheme != "data" {
				b.saw("a request outside the book: %s", ev.Request.URL)
			}
		}
	}
}

func serve(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// Every page of both languages loads in the browser with no console
// error, no exception and no failed request, and every diagram on it is
// an SVG whose labels are text; each chapter's page is saved as a
// picture, at a desktop's width and a phone's, for a person to look at.
func TestEveryPageInABrowser(t *testing.T) {
	dir, pages := setup(t)
	base := serve(t, dir)
	b := newBrowser(t)
	shots := os.Getenv("BOOK_SCREENSHOTS")
	if shots != "" {
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	diagrams := 0
	var weights []string
	for _, p := range pages {
		start := time.Now()
		err := chromedp.Do(b.ctx,
			chromedp.EmulateViewport(1280, 900),
			chromedp.Navigate(base+p.Path),
			chromedp.WaitReady("body"),
		)
		var labels []int
		if err == nil {
			labels, err = chromedp.Run(b.ctx, chromedp.Evaluate[[]int](`Array.from(document.querySelectorAll("figure.diagram")).map(f => { const s = f.querySelector(":scope > svg"); return s ? s.textContent.trim().length : -1 })`))
		}
		if err != nil {
			t.Errorf("%s: %v", p.Path, err)
			continue
		}
		for i, n := range labels {
			switch {
			case n < 0:
				t.Errorf("%s: diagram %d is no SVG", p.Path, i+1)
			case n == 0:
				t.Errorf("%s: diagram %d has no text: its labels are not text", p.Path, i+1)
			}
		}
		diagrams += len(labels)
		if p.Chapter != 0 {
			// Measured, not asserted: what a chapter's page weighs and
			// how long it takes to load here, for the README's table.
			weight, err := chromedp.Run(b.ctx, chromedp.Poll[[]float64](`(() => {
				const n = performance.getEntriesByType("navigation")[0];
				if (!n || n.loadEventEnd === 0) return null;
				let bytes = n.transferSize;
				for (const r of performance.getEntriesByType("resource")) bytes += r.transferSize;
				return [bytes, n.loadEventEnd - n.startTime];
			})()`, chromedp.WithPollingTimeout(10*time.Second)))
			if err == nil && len(weight) == 2 {
				weights = append(weights, fmt.Sprintf("%s %.0f kB in %.0f ms", p.Path, weight[0]/1000, weight[1]))
			}
		}
		if p.Chapter != 0 && shots != "" {
			for _, w := range []struct {
				name          string
				width, height int64
				mobile        bool
			}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
				opts := []chromedp.EmulateViewportOption{}
				if w.mobile {
					opts = append(opts, chromedp.EmulateMobile)
				}
				err := chromedp.Do(b.ctx,
					chromedp.EmulateViewport(w.width, w.height, opts...),
					chromedp.Navigate(base+p.Path),
					chromedp.WaitReady("body"),
				)
				var png []byte
				if err == nil {
					png, err = chromedp.Run(b.ctx, chromedp.FullScreenshot(70))
				}
				if err != nil && strings.Contains(err.Error(), "Page is too large") {
					// Taller than the browser draws in one picture: its top.
					png, err = chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
				}
				if err != nil {
					t.Errorf("%s: a picture at %s width: %v", p.Path, w.name, err)
					continue
				}
				name := fmt.Sprintf("%s-chapter%02d-%s.jpg", p.Lang, p.Chapter, w.name)
				if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, e := range b.takeErrors() {
			t.Errorf("%s: %s", p.Path, e)
		}
		t.Logf("%s: loaded, %d diagrams, in %s", p.Path, len(labels), time.Since(start).Round(time.Millisecond))
	}
	if diagrams == 0 {
		t.Error("no diagram on any page")
	}
	if shots != "" {
		t.Logf("pictures of the chapter pages in %s", shots)
	}
	t.Logf("the chapter pages, transferred and loaded:\n%s", strings.Join(weights, "\n"))
}

// The language switch lands on the same chapter in the other language,
// and back.
func TestLanguageSwitch(t *testing.T) {
	dir, _ := setup(t)
	base := serve(t, dir)
	b := newBrowser(t)
	en, zh := "en/chapters/02-finalizer-tracking.html", "zh/chapters/02-finalizer-tracking.html"
	for _, hop := range []struct{ from, to string }{{en, zh}, {zh, en}} {
		err := chromedp.Do(b.ctx,
			chromedp.Navigate(base+hop.from),
			chromedp.WaitReady(chromedp.ID("lang-switch")),
			chromedp.Click(chromedp.ID("lang-switch")),
		)
		if err != nil {
			t.Fatalf("%s: %v", hop.from, err)
		}
		// The click's navigation may not have come yet: wait for it, or
		// for the time it may take.
		var location string
		for deadline := time.Now().Add(10 * time.Second); !strings.HasSuffix(location, "/"+hop.to) && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			location, _ = chromedp.Run(b.ctx, chromedp.Location())
		}
		if !strings.HasSuffix(location, "/"+hop.to) {
			t.Errorf("the switch on %s did not lead to %s within 10 s; the browser is at %s", hop.from, hop.to, location)
			continue
		}
		if !strings.HasSuffix(location, hop.to) {
			t.Errorf("the switch on %s leads to %s, want %s", hop.from, location, hop.to)
		}
	}
}

// A search finds chapter 2 by its subject, in either language, and by the
// glossary's other name for it.
func TestSearch(t *testing.T) {
	dir, _ := setup(t)
	base := serve(t, dir)
	b := newBrowser(t)
	for _, s := range []struct{ page, query string }{
		{"en/index.html", "finalizer"},
		{"zh/index.html", "finalizer"},
		{"zh/index.html", "终结器"},
	} {
		err := chromedp.Do(b.ctx,
			chromedp.Navigate(base+s.page),
			chromedp.WaitReady(chromedp.ID("search")),
			chromedp.SendKeys(chromedp.ID("search"), s.query),
			chromedp.WaitVisible("#results li"),
		)
		var hrefs []string
		if err == nil {
			hrefs, err = chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("#results a")).map(a => a.getAttribute("href"))`))
		}
		if err != nil {
			t.Errorf("searching %q on %s: %v", s.query, s.page, err)
			continue
		}
		found := false
		for _, h := range hrefs {
			found = found || strings.HasSuffix(h, "chapters/02-finalizer-tracking.html")
		}
		if !found {
			t.Errorf("searching %q on %s finds %v, not chapter 2", s.query, s.page, hrefs)
		}
	}
}

// Chapter 5's page shows its diff side by side, with the lines it adds.
func TestSideBySideDiff(t *testing.T) {
	dir, _ := setup(t)
	base := serve(t, dir)
	b := newBrowser(t)
	err := chromedp.Do(b.ctx,
		chromedp.Navigate(base+"en/chapters/05-rebuild-pods.html"),
		chromedp.WaitReady(chromedp.ID("diff")),
	)
	if err != nil {
		t.Fatal(err)
	}
	added, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#diff table.side-by-side td.add").length`))
	if err != nil {
		t.Fatal(err)
	}
	removed, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#diff table.side-by-side td.del").length`))
	if err != nil {
		t.Fatal(err)
	}
	if added == 0 {
		t.Error("chapter 5's diff shows no added line")
	}
	t.Logf("chapter 5's diff: %d lines added, %d removed", added, removed)
}
