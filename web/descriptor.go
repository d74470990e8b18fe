package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dynworkflow/dynworkflow/internal/fsx"
)

// Descriptor is runtime.json: how another process finds the project's
// live runtime and proves itself to it. It holds the token, so it is
// written with mode 0600.
//
// It carries the Node runtime's descriptor fields too (host, port,
// authToken, descriptorPath, beside protocolVersion, pid, cwd and
// startedAt, which both name alike), so that its CLI and client
// (discoverStandaloneRuntime) find a dynworkflow serve; and one the Node
// runtime wrote, which has only those, is read as such (WrittenByNode).
type Descriptor struct {
	ProtocolVersion int       `json:"protocolVersion"`
	PID             int       `json:"pid"`
	Address         string    `json:"address,omitempty"` // host:port
	URL             string    `json:"url,omitempty"`
	Token           string    `json:"token,omitempty"`
	Cwd             string    `json:"cwd"`
	ProjectID       string    `json:"projectId,omitempty"`
	StartedAt       time.Time `json:"startedAt"`

	// The Node runtime's names.
	Host           string `json:"host"`
	Port           int    `json:"port"`
	AuthToken      string `json:"authToken"`
	DescriptorPath string `json:"descriptorPath"`
}

// WrittenByNode reports whether the Node runtime wrote d: it names its
// server by host, port and authToken only.
func (d Descriptor) WrittenByNode() bool {
	return d.Token == "" && d.Address == "" && d.AuthToken != ""
}

// NewDescriptor describes the runtime of this process serving cwd (of
// project projectID) on addr with token, whose descriptor is at path.
func NewDescriptor(path, addr, token, cwd, projectID string, pid int, started time.Time) Descriptor {
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return Descriptor{
		ProtocolVersion: ProtocolVersion, PID: pid, Address: addr, URL: "http://" + addr, Token: token,
		Cwd: cwd, ProjectID: projectID, StartedAt: started.UTC(),
		Host: host, Port: n, AuthToken: token, DescriptorPath: path,
	}
}

// DashboardURL is the link to the dashboard, token included. The token
// goes in the fragment, which browsers do not send: it stays out of
// request lines, server logs and Referer headers, and the page moves it
// to sessionStorage and out of the address bar as it loads.
func (d Descriptor) DashboardURL() string {
	return DashboardLink(d.URL, d.Token, "")
}

// RunURL is the link to one run's view in the dashboard, token included.
func (d Descriptor) RunURL(runID string) string {
	return DashboardLink(d.URL, d.Token, runID)
}

// DashboardLink is the dashboard of the server at base (http://host:port):
// base/#token=<token>&run=<runID>, each part left out when empty. Without
// the token it is the stable link to a run, for a browser that already
// holds the token.
func DashboardLink(base, token, runID string) string {
	var frag []string
	if token != "" {
		frag = append(frag, "token="+url.QueryEscape(token))
	}
	if runID != "" {
		frag = append(frag, "run="+url.QueryEscape(runID))
	}
	if len(frag) == 0 {
		return base + "/"
	}
	return base + "/#" + strings.Join(frag, "&")
}

// WriteDescriptor writes d to path atomically with mode 0600.
func WriteDescriptor(path string, d Descriptor) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes a private temp file, syncs it, and renames it
// over path, so a reader sees the old file or the new one, never half.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".runtime-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = fsx.SyncDir(filepath.Dir(path))
	}
	return err
}

// ReadDescriptor reads runtime.json. A missing file matches fs.ErrNotExist.
// A descriptor that is a symlink or not a regular file of ours is refused:
// it could name anyone's address.
func ReadDescriptor(path string) (Descriptor, error) {
	var d Descriptor
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return d, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fsx.Ours(fi) {
		return d, fmt.Errorf("%w: %s is not a file of yours", ErrUntrustedPeer, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("%s is damaged: %w", path, err)
	}
	return d, nil
}

// RemoveDescriptor removes runtime.json if it still describes the runtime
// holding token: a successor may already have replaced it.
func RemoveDescriptor(path, token string) error {
	d, err := ReadDescriptor(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && d.Token != token {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
