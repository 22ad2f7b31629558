package doctest

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Shell is one bash session that runs blocks one after another, as a
// reader pastes them into one terminal: the variables and the working
// directory a block leaves are there for the next one.
type Shell struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	done  chan struct{}
}

// StartShell starts bash in dir with env added to the test's environment.
// It is stopped when the test ends.
func StartShell(t testing.TB, dir string, env ...string) *Shell {
	t.Helper()
	cmd := exec.Command("bash", "--norc", "--noprofile")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start bash: %v", err)
	}
	s := &Shell{cmd: cmd, stdin: stdin, lines: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		stdin.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		cmd.Wait()
	})
	// Standard error joins standard output, in order; a failing command
	// (a non-zero status outside a condition, a pipeline's included) is
	// reported and the block goes on, as it would in a terminal.
	s.write(t, "exec 2>&1; set -o pipefail; trap 'printf \"@@failed %s: %s@@\\n\" \"$?\" \"$BASH_COMMAND\"' ERR\n")
	return s
}

func (s *Shell) write(t testing.TB, script string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, script); err != nil {
		t.Fatalf("write to bash: %v", err)
	}
}

var failedLine = regexp.MustCompile(`^@@failed (\d+): (.*)@@$`)

// Result is what a block printed, and the commands in it that failed.
type Result struct {
	Output string
	Failed []string
}

// Run runs script in the session, reading nothing from standard input,
// and returns what it printed once it has finished, or fails the test
// after timeout.
func (s *Shell) Run(t testing.TB, script string, timeout time.Duration) Result {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	s.write(t, "{\n"+strings.TrimRight(script, "\n")+"\n} </dev/null\nprintf '\\n@@done %s@@\\n' "+token+"\n")
	var r Result
	var out strings.Builder
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("bash exited while running:\n%s\noutput:\n%s", script, out.String())
			}
			if line == "@@done "+token+"@@" {
				r.Output = strings.TrimSuffix(out.String(), "\n")
				return r
			}
			if m := failedLine.FindStringSubmatch(line); m != nil {
				r.Failed = append(r.Failed, fmt.Sprintf("exit status %s: %s", m[1], m[2]))
				continue
			}
			out.WriteString(line)
			out.WriteByte('\n')
		case <-deadline:
			t.Fatalf("the block did not finish in %s:\n%s\noutput so far:\n%s", timeout, script, out.String())
		}
	}
}

// Var returns a shell variable's value in the session.
func (s *Shell) Var(t testing.TB, name string) string {
	t.Helper()
	if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(name) {
		t.Fatalf("not a variable name: %q", name)
	}
	r := s.Run(t, `printf '%s' "${`+name+`-}"`, 10*time.Second)
	return r.Output
}

// Background is a command that a reader leaves running in a terminal of
// its own, such as a server.
type Background struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    bytes.Buffer
	exited chan struct{}
}

// StartBackground runs script with bash in dir, with env added, in a
// process group of its own that is stopped (SIGINT, as Ctrl-C would, then
// SIGKILL) by Stop or when the test ends.
func StartBackground(t testing.TB, dir, script string, env ...string) *Background {
	t.Helper()
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	b := &Background{cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = b, b
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %q: %v", script, err)
	}
	go func() { cmd.Wait(); close(b.exited) }()
	t.Cleanup(b.Stop)
	return b
}

func (b *Background) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.Write(p)
}

// Output is what the command printed so far.
func (b *Background) Output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

// Exited reports whether the command has ended.
func (b *Background) Exited() bool {
	select {
	case <-b.exited:
		return true
	default:
		return false
	}
}

// WaitFor waits until what the command printed matches re, and fails the
// test if it exits first or timeout passes.
func (b *Background) WaitFor(t testing.TB, re *regexp.Regexp, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !re.MatchString(b.Output()) {
		if b.Exited() {
			t.Fatalf("%q exited before printing %s:\n%s", b.cmd.Args[len(b.cmd.Args)-1], re, b.Output())
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q did not print %s in %s:\n%s", b.cmd.Args[len(b.cmd.Args)-1], re, timeout, b.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop interrupts the command's group and waits for it.
func (b *Background) Stop() {
	if b.Exited() {
		return
	}
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.exited
	}
}
