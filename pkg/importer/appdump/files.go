package appdump

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/deployctl/deployctl/internal/readlimit"
)

// WriteFiles writes files (path below dir → content) under dir, making
// the folders: an input tree for a test.
func WriteFiles(dir string, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Seeds are fuzz seeds: every manifest file (.yaml, .yml, .json) below dir,
// in walk order, then two inputs that once broke readers (a List of a
// scalar and an Application, a self-referencing alias).
func Seeds(dir string) ([][]byte, error) {
	var seeds [][]byte
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			data, err := readlimit.ReadFile(p, readlimit.Import)
			if err != nil {
				return err
			}
			seeds = append(seeds, data)
		}
		return nil
	})
	seeds = append(seeds, []byte("kind: List\nitems: [3, {kind: Application}]\n"), []byte("a: &x [*x]"))
	return seeds, err
}
