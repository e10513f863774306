package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// gitConfig is passed to every git command, so that no user or repository
// setting changes what the generator writes or runs: no hook (update-ref
// runs the reference-transaction hook), no signing, UTF-8 messages without
// an encoding header, no split index or file-system monitor beside the
// temporary index, and blobs extracted as they are stored.
var gitConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "commit.gpgSign=false",
	"-c", "i18n.commitEncoding=UTF-8",
	"-c", "core.splitIndex=false",
	"-c", "core.fsmonitor=false",
	"-c", "core.autocrlf=false",
}

// repo runs git in one repository.
type repo struct {
	dir string
	// env is added to every command's environment (a temporary index).
	env []string
}

// run runs git with args and returns its standard output. The error
// carries the command and its standard error.
func (r *repo) run(ctx context.Context, stdin io.Reader, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitConfig...), args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(append(os.Environ(), r.env...), env...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// git runs git with args and no input, and returns its trimmed output.
func (r *repo) git(ctx context.Context, args ...string) (string, error) {
	out, err := r.run(ctx, nil, nil, args...)
	return strings.TrimSpace(out), err
}

// hashObject writes data to the object database as a blob, as is (no
// attributes, no end-of-line conversion), and returns its ID.
func (r *repo) hashObject(ctx context.Context, data []byte) (string, error) {
	out, err := r.run(ctx, bytes.NewReader(data), nil, "hash-object", "-w", "--no-filters", "--stdin")
	return strings.TrimSpace(out), err
}

// blobReader reads many blobs through one `git cat-file --batch`.
type blobReader struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (r *repo) blobReader(ctx context.Context) (*blobReader, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitConfig...), "cat-file", "--batch")...)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(), r.env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file --batch: %w", err)
	}
	return &blobReader{cmd: cmd, in: in, out: bufio.NewReader(out)}, nil
}

// read returns the content of the blob id.
func (b *blobReader) read(id string) ([]byte, error) {
	if _, err := fmt.Fprintln(b.in, id); err != nil {
		return nil, err
	}
	header, err := b.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("git cat-file --batch: %w", err)
	}
	fields := strings.Fields(header) // <id> blob <size>, or <id> missing
	if len(fields) != 3 || fields[1] != "blob" {
		return nil, fmt.Errorf("git cat-file: %s is not a blob: %s", id, strings.TrimSpace(header))
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil {
		return nil, fmt.Errorf("git cat-file: bad header %q", header)
	}
	data := make([]byte, size+1) // the content and a newline
	if _, err := io.ReadFull(b.out, data); err != nil {
		return nil, fmt.Errorf("git cat-file: reading %s: %w", id, err)
	}
	return data[:size], nil
}

func (b *blobReader) close() error {
	b.in.Close()
	return b.cmd.Wait()
}
