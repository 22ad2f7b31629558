package e2e

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// receiverProcess is a running example receiver.
type receiverProcess struct {
	name string
	cmd  *exec.Cmd
	// url is its POST /webhooks.
	url    string
	out    *logBuffer
	exited chan struct{}
	err    error // the Wait error, once exited is closed
}

// startReceiver starts argv with env added, in the repository's root and in
// a process group of its own, and waits until it says it accepts requests:
// the contract's line on stdout, or a line that ready matches. The caller
// stops it: a receiver outlives the step that started it.
func startReceiver(t *testing.T, name string, argv []string, env []string, port int, ready func(string) bool) *receiverProcess {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "PORT="+strconv.Itoa(port))
	// The group takes the children along (php -S workers) when it is stopped.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the %s receiver (%s): %v", name, strings.Join(argv, " "), err)
	}
	p := &receiverProcess{name: name, cmd: cmd, url: "http://127.0.0.1:" + strconv.Itoa(port) + "/webhooks", out: &logBuffer{}, exited: make(chan struct{})}
	listening := "listening on 127.0.0.1:" + strconv.Itoa(port)
	up := make(chan struct{}, 2)
	scan := func(r io.Reader, stream string) <-chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(r)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Text()
				p.out.Write([]byte(stream + line + "\n"))
				if (stream == "" && strings.TrimSpace(line) == listening) || (ready != nil && ready(line)) {
					select {
					case up <- struct{}{}:
					default:
					}
				}
			}
		}()
		return done
	}
	outDone, errDone := scan(stdout, ""), scan(stderr, "stderr: ")
	go func() {
		<-outDone
		<-errDone
		p.err = cmd.Wait()
		close(p.exited)
	}()
	select {
	case <-up:
	case <-p.exited:
		t.Fatalf("the %s receiver (%s) exited before %q: %v\n%s", name, strings.Join(argv, " "), listening, p.err, p.out)
	case <-time.After(30 * time.Second):
		p.kill()
		t.Fatalf("the %s receiver (%s) did not print %q in 30 s:\n%s", name, strings.Join(argv, " "), listening, p.out)
	}
	return p
}

// stop sends SIGTERM to the receiver's group and waits for it to exit: the
// contract asks it to exit on SIGTERM. It is safe to call again.
func (p *receiverProcess) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.exited:
		return
	default:
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.kill()
		t.Errorf("the %s receiver did not exit within 10 s of SIGTERM:\n%s", p.name, p.out)
	}
	if t.Failed() {
		t.Logf("output of the %s receiver at %s:\n%s", p.name, p.url, p.out)
	}
}

// kill ends the receiver's group at once and waits for it.
func (p *receiverProcess) kill() {
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// freePort returns a port that was free a moment ago, for a receiver that
// takes its port from PORT.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
