package proc

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a started child process whose output goes to a log file.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // what Wait returned; valid once done is closed
}

// Start starts cmd with its stdout and stderr going to log, which is closed
// when the process exits. If the calling process dies without stopping
// it, the child is killed too.
func Start(cmd *exec.Cmd, log *os.File) (*Process, error) {
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process' ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is what waiting for the process returned; valid once Done is closed.
func (p *Process) Err() error { return p.err }

// Running reports whether the process is alive.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM, kills the process if it is still there after grace,
// and waits for it to exit. It says so if the process did not stop
// gracefully: it had to be killed, or it exited with an error (a program
// that handles SIGTERM, as controller-runtime's signal handler does,
// exits with status 0). A process that had exited already is no error of
// Stop's: Err says how it ended.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Running() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("process %d did not exit within %s of SIGTERM, and was killed", p.Pid(), grace)
	}
	if err := p.Err(); err != nil {
		return fmt.Errorf("process %d exited after SIGTERM with %w", p.Pid(), err)
	}
	return nil
}

// Signal sends sig to the process, if it still runs.
func (p *Process) Signal(sig os.Signal) error {
	if !p.Running() {
		return fmt.Errorf("process %d has exited", p.Pid())
	}
	return p.cmd.Process.Signal(sig)
}

// Kill sends SIGKILL and waits for the process to exit.
func (p *Process) Kill() {
	if !p.Running() {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}
