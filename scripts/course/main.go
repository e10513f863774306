// Command course answers the Makefile's questions about chapters from the
// table of chapters (package chapters), so that a chapter number a
// learner types is checked by one rule, with one message, in Go, and a
// chapter's suite directory is the table's, not a format string in Make.
//
//	course chapter [--from N] [--deploy] VALUE   check a chapter number
//	course chapters VALUE                        check a list of them (TEST_CHAPTERS)
//	course suite-dirs N...                       print the chapters' suite directories
//	course prove-lanes --output-dir DIR LANES    prove each lane of chapters at once (make prove-chapters)
//
// A check prints nothing and exits 0, or prints the error and exits 2.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"example.com/redis-operator/chapters"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// errUsage is a command line the tool cannot read.
var errUsage = errors.New("usage: course chapter|chapters|suite-dirs|prove-lanes [flags] VALUE")

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "prove-lanes" {
		fs := flag.NewFlagSet("course prove-lanes", flag.ContinueOnError)
		outDir := fs.String("output-dir", "_output", "the output directory; each lane but the first runs under DIR/lane-RANGE")
		if fs.Parse(args[1:]) != nil {
			return 2
		}
		lanes, err := chapters.ParseLanes(strings.Join(fs.Args(), " "))
		if err != nil {
			fmt.Fprintln(stderr, "error: PROVE_LANES:", err)
			return 2
		}
		if err := proveLanes(lanes, *outDir, stdout); err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 1
		}
		return 0
	}
	out, err := answer(args)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 2
	}
	if out != "" {
		fmt.Fprintln(stdout, out)
	}
	return 0
}

// answer runs one subcommand: what it prints, or why the value is wrong.
func answer(args []string) (string, error) {
	if len(args) == 0 {
		return "", errUsage
	}
	fs := flag.NewFlagSet("course "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	from := fs.Int("from", 1, "the first chapter the command takes")
	deploy := fs.Bool("deploy", false, "the chapter must be one that make deploy runs")
	name := fs.String("name", "", "the Make variable the value comes from, for the message")
	if err := fs.Parse(args[1:]); err != nil {
		return "", fmt.Errorf("%w: %v", errUsage, err)
	}
	value := strings.Join(fs.Args(), " ")
	named := func(err error) error {
		if err != nil && *name != "" {
			return fmt.Errorf("%s: %w", *name, err)
		}
		return err
	}
	switch args[0] {
	case "chapter":
		if fs.NArg() > 1 {
			return "", named(fmt.Errorf("one chapter, got %q", value))
		}
		c, err := chapters.ParseFrom(value, *from)
		if err != nil {
			return "", named(fmt.Errorf("%w (chapters: %s)", err, names()))
		}
		if *deploy {
			return "", named(deployable(c))
		}
		return "", nil
	case "chapters":
		_, err := chapters.ParseList(value)
		return "", named(err)
	case "suite-dirs":
		cs, err := chapters.ParseList(value)
		if err != nil {
			return "", named(err)
		}
		dirs := make([]string, len(cs))
		for i, c := range cs {
			dirs[i] = chapters.SuiteDir(c.Number)
		}
		return strings.Join(dirs, " "), nil
	}
	return "", errUsage
}

// deployable says why make deploy cannot deploy chapter c, or nil.
func deployable(c chapters.Chapter) error {
	if c.Rewrites != 0 {
		return fmt.Errorf("chapter %d rewrites a chapter that runs on your machine, and runs there too: make run %d", c.Number, c.Number)
	}
	if !c.InCluster {
		return fmt.Errorf("make deploy runs the chapters that run in the cluster, %s (got chapter %d); make run N runs any chapter on your machine",
			strings.Trim(fmt.Sprint(chapters.Where(func(c chapters.Chapter) bool { return c.InCluster })), "[]"), c.Number)
	}
	return nil
}

// names lists the chapters' directory names, for a message.
func names() string {
	var n []string
	for _, c := range chapters.All {
		n = append(n, c.Name())
	}
	return strings.Join(n, " ")
}

// proveLanes runs make prove-range for each lane at once: the first on
// the test cluster, each other on a local cluster of its own under
// outDir/lane-RANGE, which it stops at the end. Most of a suite's time is
// spent waiting for the cluster. Each line a lane prints is prefixed with
// its range.
func proveLanes(lanes []string, outDir string, stdout io.Writer) error {
	makeCmd := func(w io.Writer, args ...string) *exec.Cmd {
		cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
		cmd.Stdout, cmd.Stderr = w, w
		return cmd
	}
	if len(lanes) == 1 {
		return makeCmd(stdout, "prove-range", "RANGE="+lanes[0]).Run()
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []string
	)
	for i, lane := range lanes {
		args := []string{"prove-range", "RANGE=" + lane}
		own := []string{"CLUSTER=local", "OUTPUT_DIR=" + filepath.Join(outDir, "lane-"+lane)}
		if i > 0 {
			args = append(args, own...)
		}
		wg.Go(func() {
			r, w := io.Pipe()
			done := make(chan struct{})
			go func() {
				defer close(done)
				sc := bufio.NewScanner(r)
				sc.Buffer(make([]byte, 1024*1024), 1024*1024)
				for sc.Scan() {
					mu.Lock()
					fmt.Fprintf(stdout, "[%s] %s\n", lane, sc.Text())
					mu.Unlock()
				}
				_, _ = io.Copy(io.Discard, r)
			}()
			err := makeCmd(w, args...).Run()
			if i > 0 {
				_ = makeCmd(w, append([]string{"cluster-down"}, own...)...).Run()
			}
			_ = w.Close()
			<-done
			if err != nil {
				mu.Lock()
				failed = append(failed, lane)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		return fmt.Errorf("lanes %s failed (see above)", strings.Join(failed, ", "))
	}
	return nil
}
