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

// markerLimit bounds the read of a marker: the header, the platform and
// one line per file (a platform of 700 apps lists about 60 KiB).
const markerLimit = 8 << 20

// markerFile is the marker's content: deterministic, so `make verify` can
// compare trees. It lists every file the tree holds (paths, sorted), so a
// later Write replaces and removes only those; the platform line is last.
func markerFile(platform string, files []string) []byte {
	var b strings.Builder
	b.WriteString("# Written by `deployctl generate`, which replaces this folder as a whole on\n" +
		"# every run. It replaces only the files listed here: anything else in the\n" +
		"# folder (a file, a link, a mount) makes it refuse. Without this file,\n" +
		"# generate refuses to touch the folder.\n" +
		"files:\n")
	for _, f := range files {
		b.WriteString("- " + f + "\n")
	}
	b.WriteString("platform: " + platform + "\n")
	return []byte(b.String())
}

// errNoPlatform: a marker without its platform line, which is its last.
var errNoPlatform = errors.New("it names no platform")

// markerInfo is what a folder's marker says.
type markerInfo struct {
	found    bool
	platform string
	// files are the files it lists; nil for a marker written before
	// markers listed them (see checkOwned).
	files map[string]bool
}

// readMarker reads a folder's marker. found is false when there is none;
// err when there is one generate did not write (not a regular file, too
// large, no platform line).
func readMarker(dir string) (markerInfo, error) {
	p := filepath.Join(dir, Marker)
	fi, err := os.Lstat(p)
	if os.IsNotExist(err) {
		return markerInfo{}, nil
	}
	m := markerInfo{found: true}
	if err != nil {
		return m, err
	}
	if !fi.Mode().IsRegular() {
		return m, fmt.Errorf("it is %s", atomicfile.Kind(fi.Mode()))
	}
	data, err := readlimit.ReadFile(p, markerLimit)
	if err != nil {
		return m, err
	}
	inList := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "files:":
			inList, m.files = true, map[string]bool{}
		case inList && strings.HasPrefix(line, "- "):
			m.files[line[len("- "):]] = true
		default:
			inList = false
			if name, ok := strings.CutPrefix(line, "platform: "); ok && name != "" {
				m.platform = name
			}
		}
	}
	if m.platform == "" {
		return m, errNoPlatform
	}
	return m, nil
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
