package temporal

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/dynworkflow/dynworkflow/lang"
)

// A Bundle is a script with every file it pulls in, as text: workflow code
// may not read a worker's disk, and a run must run exactly the files it was
// started with on whichever worker replays it.
type Bundle struct {
	Path  string            `json:"path"`
	Files map[string]string `json:"files"`
}

// BundleFile reads the script at path and the files it loads, and returns
// the bundle with the script loaded from it.
func BundleFile(hosts *lang.Registry, path string) (Bundle, lang.Script, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return Bundle{}, nil, fmt.Errorf("read workflow: %w", err)
	}
	return BundleSource(hosts, lang.Source{Path: path, Text: text})
}

// BundleSource loads src, reading the files it loads from disk (or with
// src.ReadFile), and returns the bundle of what was read.
func BundleSource(hosts *lang.Registry, src lang.Source) (Bundle, lang.Script, error) {
	b := Bundle{Path: src.Path, Files: map[string]string{src.Path: string(src.Text)}}
	read := src.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	src.ReadFile = func(path string) ([]byte, error) {
		text, err := read(path)
		if err == nil {
			b.Files[path] = string(text)
		}
		return text, err
	}
	script, err := hosts.Load(src)
	if err != nil {
		return Bundle{}, nil, err
	}
	return b, script, nil
}

// Load loads the bundled script without touching the disk.
func (b Bundle) Load(hosts *lang.Registry) (lang.Script, error) {
	text, ok := b.Files[b.Path]
	if !ok {
		return nil, fmt.Errorf("the bundle of %s lacks the script itself", b.Path)
	}
	return hosts.Load(lang.Source{Path: b.Path, Text: []byte(text), ReadFile: b.read})
}

func (b Bundle) read(path string) ([]byte, error) {
	text, ok := b.Files[path]
	if !ok {
		return nil, fmt.Errorf("%s is not in the run's bundle: %w", path, fs.ErrNotExist)
	}
	return []byte(text), nil
}
