package remote

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"mnemo/engine/safefile"
)

// Where the socket lives.
const (
	// SocketName is the socket's name in the index folder.
	SocketName = "serve.sock"
	// addrName is the file in the index folder that holds the socket's
	// path when the index folder's path is too long for a socket.
	addrName = "serve.addr"
	// maxSocketPath is the longest socket path every unix accepts (macOS
	// and the BSDs allow 103 bytes, Linux 107).
	maxSocketPath = 103
	// dialTimeout bounds a connect to a server that does not accept.
	dialTimeout = 2 * time.Second
)

// Listen opens the socket for the index in indexDir: INDEX/serve.sock,
// or, when that path is too long for a unix socket, a socket in a new
// private folder under os.TempDir() whose path INDEX/serve.addr records.
// The socket is mode 0600. A socket a dead server left behind is removed;
// one a live server answers on is an error. The caller must hold the
// index as its writer, so that no other server can be starting beside it.
// Closing the listener removes the socket (and serve.addr).
func Listen(indexDir string) (net.Listener, error) {
	dir, err := filepath.Abs(indexDir)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	if err := clearStale(dir); err != nil {
		return nil, err
	}
	l := &listener{path: filepath.Join(dir, SocketName)}
	// Bind under a temporary name, make it private, then rename it into
	// place: no one can connect in the moment before the chmod.
	tmp := filepath.Join(dir, fmt.Sprintf(".serve-%d.sock", os.Getpid()))
	if len(tmp) > maxSocketPath {
		if l.tmpDir, err = os.MkdirTemp("", "mnemo-"); err != nil { // mode 0700: private already
			return nil, fmt.Errorf("socket: %w", err)
		}
		l.path = filepath.Join(l.tmpDir, SocketName)
		l.addrFile = filepath.Join(dir, addrName)
		tmp = l.path
		if len(l.path) > maxSocketPath {
			os.Remove(l.tmpDir)
			return nil, fmt.Errorf("socket: %s and the temporary folder %s are both too long for a unix socket path", dir, l.tmpDir)
		}
	}
	os.Remove(tmp) // left by a process of the same pid that died
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		l.removeFiles()
		return nil, fmt.Errorf("socket: %w", err)
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false) // Close removes the final path, not tmp
	l.Listener = ul
	if err := os.Chmod(tmp, 0o600); err != nil {
		l.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("socket: %w", err)
	}
	if tmp != l.path {
		if err := os.Rename(tmp, l.path); err != nil {
			l.Close()
			os.Remove(tmp)
			return nil, fmt.Errorf("socket: %w", err)
		}
	}
	if l.addrFile != "" {
		if err := writeFileAtomic(l.addrFile, []byte(l.path+"\n")); err != nil {
			l.Close()
			return nil, fmt.Errorf("socket: %w", err)
		}
	}
	return l, nil
}

// listener removes its socket, and the files that point to it, on Close.
type listener struct {
	net.Listener
	path     string // the socket
	tmpDir   string // the private folder that holds it, if not the index folder
	addrFile string // INDEX/serve.addr, if the socket is elsewhere

	once sync.Once
	err  error
}

func (l *listener) Close() error {
	l.once.Do(func() {
		l.err = l.Listener.Close()
		l.removeFiles()
	})
	return l.err
}

// Addr names the socket by its path.
func (l *listener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }

func (l *listener) removeFiles() {
	os.Remove(l.path)
	if l.addrFile != "" {
		os.Remove(l.addrFile)
	}
	if l.tmpDir != "" {
		os.Remove(l.tmpDir)
	}
}

// socketPath is where the server for the index in dir listens, if one does.
func socketPath(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if b, err := safefile.Read(filepath.Join(dir, addrName), 4096, true); err == nil {
		if p := strings.TrimSpace(string(b)); p != "" {
			return p, nil
		}
	}
	return filepath.Join(dir, SocketName), nil
}

// clearStale removes the sockets (and serve.addr) a server that died left
// in dir, and fails if a live server answers on one.
func clearStale(dir string) error {
	addrFile := filepath.Join(dir, addrName)
	candidates := []string{filepath.Join(dir, SocketName)}
	if b, err := os.ReadFile(addrFile); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(b)))
	}
	for i, p := range candidates {
		if p == "" {
			continue
		}
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if c, err := net.DialTimeout("unix", p, dialTimeout); err == nil {
			c.Close()
			return fmt.Errorf("socket: another process already serves this index on %s", p)
		}
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSocket == 0 {
			return fmt.Errorf("socket: %s exists and is not a socket", p)
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("socket: remove stale %s: %w", p, err)
		}
		if i > 0 {
			// The private folder a fallback socket lived in; Remove only
			// takes it if it is empty.
			os.Remove(filepath.Dir(p))
		}
	}
	if err := os.Remove(addrFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("socket: remove stale %s: %w", addrFile, err)
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	return safefile.Write(path, data, 0o600)
}

// checkSocketFile refuses a socket path that is not a socket this user
// owns: another user who can write to the index folder could plant one
// there to receive this user's requests.
func checkSocketFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s is not a socket", path)
	}
	if !safefile.OwnedByMe(fi) {
		return fmt.Errorf("%s belongs to another user: %w", path, ErrForeignPeer)
	}
	return nil
}

// ErrForeignPeer is the error for a socket, or a process at its other end,
// of another user than this one.
var ErrForeignPeer = errors.New("refusing a peer of another user")

// checkPeer refuses a connection whose other end is another user's process.
func checkPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("not a unix socket connection: %T", c)
	}
	uid, err := peerUID(uc)
	if err != nil {
		return err
	}
	if uid != os.Getuid() {
		return fmt.Errorf("the process at the other end is user %d, not this user (%d): %w", uid, os.Getuid(), ErrForeignPeer)
	}
	return nil
}
