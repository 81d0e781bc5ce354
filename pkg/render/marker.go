package render

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/deployctl/deployctl/internal/atomicfile"
	"github.com/deployctl/deployctl/internal/readlimit"
)

// Marker is the file at the root of every tree Write writes: the writer's
// claim on the folder. Only a folder holding it (as a regular file naming
// the same platform) is ever replaced.
const Marker = ".deployctl-generated"

// markerLimit bounds the read of a marker: ours are a few hundred bytes.
const markerLimit = 4 << 10

// markerFile is the marker's content: deterministic, so `make verify` can
// compare trees.
func markerFile(platform string) []byte {
	return []byte("# Written by `deployctl generate`, which replaces this folder as a whole on\n" +
		"# every run: files added here are deleted. Without this file, generate\n" +
		"# refuses to touch the folder.\n" +
		"platform: " + platform + "\n")
}

// markerPlatform reads the platform a folder's marker names. ok is false
// when there is no marker; err when there is one generate did not write
// (not a regular file, too large, no platform line).
func markerPlatform(dir string) (platform string, ok bool, err error) {
	p := filepath.Join(dir, Marker)
	fi, err := os.Lstat(p)
	if os.IsNotExist(err) {
		return "", false, nil
	}
	if err != nil {
		return "", true, err
	}
	if !fi.Mode().IsRegular() {
		return "", true, fmt.Errorf("it is %s", atomicfile.Kind(fi.Mode()))
	}
	data, err := readlimit.ReadFile(p, markerLimit)
	if err != nil {
		return "", true, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, found := strings.CutPrefix(line, "platform: "); found && name != "" {
			return name, true, nil
		}
	}
	return "", true, errors.New("it names no platform")
}

// legacyTree recognises a tree written before the marker existed, so an
// upgrade does not turn every `make generate` into a refusal: its README.md
// starts as this tree's does (the generated header and the same platform
// title), and every top-level entry is one this tree writes too — a .git,
// a user's file or another platform's tree is not.
func (t Tree) legacyTree(dir string, entries []os.DirEntry) bool {
	readme, ok := t["README.md"]
	if !ok {
		return false
	}
	head := readme
	for i, n := 0, 0; i < len(readme); i++ {
		if readme[i] == '\n' {
			if n++; n == 2 {
				head = readme[:i+1]
				break
			}
		}
	}
	top := map[string]bool{}
	for p := range t {
		top[strings.SplitN(p, "/", 2)[0]] = true
	}
	for _, e := range entries {
		if !top[e.Name()] {
			return false
		}
	}
	p := filepath.Join(dir, "README.md")
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular() && atomicfile.StartsWith(p, string(head))
}
