package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/deployctl/deployctl/internal/atomicfile"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/resdeps"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Mark starts every spec import writes: an existing -o file is replaced
// only when it starts so (an earlier import's), never a file of the user's.
const Mark = "# Imported by `deployctl import`"

// Command is one `deployctl import` as its command line gives it
// (pkg/cmd/deployctl/importcmd wires the flags to it).
type Command struct {
	Paths     []string // files and folders; "-" is standard input
	StackFrom string   // --stack-from, as written
	Output    string   // -o: the spec file; "" or "-" is standard output
	Strict    bool     // write nothing when an Application has a field the spec cannot express
	Inventory resdeps.SourceConfig
	// Options holds the rest: Name ("" derives it from Output),
	// namespaces, server, account, image, PruneUnexplained. Run fills in
	// StackFrom, File, Inventory and Context.
	Options Options
}

// Run checks every argument in one pass, reads every input, imports,
// loads the result once more and writes it: to Output, replacing only a
// file an earlier import wrote, or to stdout; notes, differences and the
// summary go to stderr. Its errors carry the exit code: 3 for invalid
// input or arguments (nothing written), 1 for a failed --live read.
func (c Command) Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	o := c.Options
	toStdout := c.Output == "" || c.Output == "-"
	// Every argument problem in one pass, before the inputs are read.
	var problems []error
	var err error
	if o.StackFrom, err = ParseStackFrom(c.StackFrom); err != nil {
		problems = append(problems, err)
	}
	if o.Name == "" {
		o.Name = "platform"
		if !toStdout {
			o.Name = strings.TrimSuffix(filepath.Base(c.Output), filepath.Ext(c.Output))
		}
	}
	if !validName(o.Name) {
		problems = append(problems, fmt.Errorf("platform name %q: want a DNS-1123 label (--name)", o.Name))
	}
	if !toStdout {
		if err := atomicfile.Check(c.Output, Mark); err != nil {
			problems = append(problems, fmt.Errorf("-o %w (-o - writes to standard output)", err))
		}
	}
	if o.PruneUnexplained && !c.Inventory.Given() {
		problems = append(problems, errors.New("--prune-unexplained goes with --manifests or --live: it drops the wave edges no resource needs"))
	}
	if o.Inventory, err = c.Inventory.Open(); err != nil {
		problems = append(problems, err)
	}
	if len(problems) > 0 {
		return exitcode.With(exitcode.Invalid, errors.Join(problems...))
	}
	o.Context = ctx
	o.File = c.Output
	if toStdout {
		o.File = "(stdout)"
	}
	var paths []string
	fromStdin := false
	for _, a := range c.Paths {
		if a == "-" {
			fromStdin = true
		} else {
			paths = append(paths, a)
		}
	}
	// Every input is read, each within readlimit.Import, and every
	// problem in any of them is reported together.
	in, _ := appread.Read(paths)
	if fromStdin {
		_ = in.ReadStdin(stdin, "(stdin)")
	}
	if err := in.Err(); err != nil {
		return exitcode.With(exitcode.Invalid, err)
	}
	limitMemory(in.Size())
	r, err := Import(in, o)
	var fe *resdeps.FetchError
	if errors.As(err, &fe) {
		return exitcode.With(exitcode.Failure, err)
	}
	if err != nil {
		return exitcode.With(exitcode.Invalid, err)
	}
	// The importer loaded and compiled it already; load once more,
	// exactly these bytes, right before writing them.
	if _, err := spec.Load(o.File, r.YAML); err != nil {
		return exitcode.With(exitcode.Invalid, fmt.Errorf("internal: the imported spec does not load; nothing was written:\n%w", err))
	}
	summarize(stderr, r)
	if c.Strict && len(r.Differences) > 0 {
		return exitcode.With(exitcode.Invalid, errors.New("--strict: some Applications have fields the spec cannot express (above); nothing was written"))
	}
	if toStdout {
		_, err = stdout.Write(r.YAML)
		return err
	}
	if err := atomicfile.Write(c.Output, r.YAML, Mark); err != nil {
		if atomicfile.IsRefused(err) {
			return exitcode.With(exitcode.Invalid, err)
		}
		return err
	}
	fmt.Fprintf(stderr, "wrote %s\n", c.Output)
	return nil
}

// The soft memory limit of an import: memoryBase plus memoryPerInputByte
// times the input. With Go's default GOGC=100 the heap grows to twice what
// is live before it is collected; the limit has the collector keep the heap
// near what is live instead. What is live peaks at 7 to 9 times the input
// (10,000 Applications: the spec built, then loaded and compiled one app
// at a time as a check; the Applications kept only as the JSON the check
// compares; 9 with many inferred dependencies). It is soft: when more is
// live, the import still finishes, the collector then working harder (at
// 8 times, no slower than the 20 times before; `make bench-import`).
// GOMEMLIMIT in the environment replaces it.
const (
	memoryBase         = 32 << 20
	memoryPerInputByte = 8
)

func limitMemory(input int64) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(memoryBase + memoryPerInputByte*input)
}

func validName(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

func summarize(w io.Writer, r *Result) {
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, d := range r.Differences {
		fmt.Fprintf(w, "warning: %s: %s\n", d.App, d)
	}
	stackEdges := 0
	for _, e := range r.Edges {
		if e.Stack {
			stackEdges++
		}
	}
	fields := "no field lost"
	switch n := len(r.Differences); {
	case n == 1:
		fields = "1 field the spec cannot express"
	case n > 1:
		fields = fmt.Sprintf("%d fields the spec cannot express", n)
	}
	if s := r.Resources; s != nil {
		waves := len(r.Edges) - s.Added
		fate := "kept, marked \"from sync-wave only\""
		if s.Pruned {
			fate = "dropped"
		}
		fmt.Fprintf(w, "imported %d apps in %d stacks; %d dependencies from the resources (%d added, the others ordered already), "+
			"%d sync-wave dependencies kept (%d between stacks): %d a resource needs, %d not checked; %d nothing needs, %s; %s\n",
			len(r.Sources), len(r.Platform.Spec.Stacks), s.Inferred, s.Added, waves, stackEdges, s.Explained, s.Unchecked, s.Unexplained, fate, fields)
		return
	}
	fmt.Fprintf(w, "imported %d apps in %d stacks; %d dependencies inferred from sync waves (%d between stacks); %s\n",
		len(r.Sources), len(r.Platform.Spec.Stacks), len(r.Edges), stackEdges, fields)
}
