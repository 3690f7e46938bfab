package remote_test

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mnemo/cmd/mnemo/remote"
)

// nobody is the user the tests that need a second user become (root only).
const nobody = 65534

// TestDialRefusesPlantedSocket: the client connects only to a socket that
// is a socket, not a link, and this user's; a planted one gets no request.
func TestDialRefusesPlantedSocket(t *testing.T) {
	index := t.TempDir()
	sock := filepath.Join(index, remote.SocketName)

	writeFile(t, sock, "not a socket")
	if _, err := remote.Dial(index); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("a regular file: %v", err)
	}
	os.Remove(sock)

	// A link to a live socket elsewhere.
	other := filepath.Join(t.TempDir(), "s.sock")
	ln, err := net.Listen("unix", other)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	if err := os.Symlink(other, sock); err != nil {
		t.Fatal(err)
	}
	if _, err := remote.Dial(index); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("a link to a socket: %v", err)
	}
	os.Remove(sock)

	if os.Getuid() != 0 {
		t.Log("not root: the socket of another user is not tried")
	} else {
		planted, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer planted.Close()
		go func() {
			for {
				c, err := planted.Accept()
				if err != nil {
					return
				}
				accepted <- struct{}{}
				c.Close()
			}
		}()
		if err := os.Lchown(sock, nobody, nobody); err != nil {
			t.Fatal(err)
		}
		if _, err := remote.Dial(index); !errors.Is(err, remote.ErrForeignPeer) {
			t.Errorf("another user's socket: %v, want ErrForeignPeer", err)
		}
	}
	select {
	case <-accepted:
		t.Error("a planted socket received a connection")
	default:
	}
}

// TestServerRefusesForeignPeer: a process of another user that reaches the
// socket (its mode opened up here, as a careless umask or a shared folder
// might) gets a refusal, never an answer.
func TestServerRefusesForeignPeer(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root, to run a client as another user")
	}
	f := newFixture(t)
	sock := filepath.Join(f.index, remote.SocketName)
	for d := f.index; d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(d, fi.Mode().Perm()|0o055)
		}
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	// The test binary, where the other user may run it.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(filepath.Dir(f.index), "probe")
	if err := os.WriteFile(probe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(probe)
	cmd.Env = append(os.Environ(), "MNEMO_REMOTE_PROBE="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the probe did not finish")
	}
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if s := string(out); !strings.Contains(s, "foreign-peer") || strings.Contains(s, `"result"`) || strings.Contains(s, f.mem) {
		t.Errorf("another user's request got %q, want a foreign-peer refusal", s)
	}
}
