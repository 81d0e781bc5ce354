// Package importcmd implements `deployctl import`: a spec from existing Argo
// CD Applications (the package is not named import, a Go keyword).
package importcmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/internal/atomicfile"
	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/inventoryflags"
	"github.com/deployctl/deployctl/pkg/deps"
	"github.com/deployctl/deployctl/pkg/exitcode"
	"github.com/deployctl/deployctl/pkg/importer"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/spec"
)

// Mark starts every spec import writes: an existing -o file is replaced
// only when it starts so (an earlier import's), never a file of the user's.
const Mark = "# Imported by `deployctl import`"

// NewCommand returns `deployctl import PATH...`.
func NewCommand() *cobra.Command {
	var o importer.Options
	var stackFrom, output string
	var strict bool
	var inventory *deps.SourceConfig
	cmd := &cobra.Command{
		Use:   "import PATH...",
		Short: "Write a platform spec from existing Argo CD Applications (an app-of-apps with sync waves)",
		Long: `import reads Argo CD Application manifests — files or folders of YAML or
JSON ("-" for stdin), single objects, multi-document YAML as an app-of-apps
chart renders it, or a List as 'kubectl get applications -A -o yaml' prints
it (status ignored) — and writes a platform spec. A folder with a
kustomization.yaml is built (Kustomize API, local bases only); an
ApplicationSet with one List generator is expanded; Helm templates must be
rendered first. Every input is read (at most 64 MiB each, a folder in total)
and every problem reported at once, at its file and line.

The spec has:

  - stacks from --stack-from: label=KEY or annotation=KEY (its value), parent
    (the default: the parent Application from an owner reference, Argo CD's
    tracking label argocd.argoproj.io/instance or app.kubernetes.io/instance,
    the tracking-id annotation, or, for files from Git, the parent whose
    directory source holds the file), or folder (the first folder below a
    folder argument);
  - apps with their source or sources, destination, project, sync options,
    sync policy, ignoreDifferences, labels and annotations, and the
    Application's namespace when it is not Argo CD's
    (applicationNamespace: apps in any namespace); app-of-apps
    parents are left out (deployctl creates their children itself), except
    for what they deploy besides Applications;
  - dependencies inferred from argocd.argoproj.io/sync-wave as Argo CD
    applies it. With --stack-from parent, each wave of a parent's children
    is a stack that waits for the wave before it (all below it done) or, if
    first, for what the parent waited for (README: "Import"). Otherwise,
    inside a stack every app waits for the apps of the nearest lower wave
    (no wave is wave 0): at most 95,325 such dependencies in all (each at
    least 11 bytes of the deploy workflow, which generate refuses over 1
    MiB); more are refused with exit 3. Each inferred entry carries the comment "# inferred
    from sync-wave A → B": delete those that are not real dependencies
    ('deployctl lint' names redundant ones).
    The waves stay in the annotations deployctl.dev/sync-wave(-path), for
    'deployctl plan --compare-waves'.

--manifests DIR holds the wave dependencies against what the apps deploy:
DIR/<app>/*.yaml|*.yml|*.json, one folder per Application named after it, as
'argocd app manifests APP', 'helm template' or 'kustomize build' print them
(README: "Dependencies from resources" has the rules: CRD → custom resource,
StorageClass → PVC, IngressClass/GatewayClass → Ingress/Gateway/route,
issuer → Certificate, secret store → ExternalSecret, Namespace, admission
webhook, PriorityClass/RuntimeClass). A wave entry a resource needs gets the
evidence as its comment ("# needs CRD certificates.cert-manager.io from
cert-manager"); one nothing needs is marked "# from sync-wave only: no
resource needs it" (--prune-unexplained drops it); a resource dependency the
entries do not order yet is added to the consumer app's dependsOn with its
evidence. One the waves order the other way round is an error (exit 3).
--live reads the same inventory from the Argo CD API instead, read-only: each
app's managed resources (GET /api/v1/applications/NAME/managed-resources,
their target state), with deploystep's connection settings: --server,
--token-file, --ca-file, --root-path, --plaintext, --insecure-skip-verify (or
ARGOCD_SERVER, ARGOCD_TOKEN_FILE, ARGOCD_CA_FILE, ARGOCD_ROOT_PATH,
ARGOCD_PLAINTEXT, ARGOCD_INSECURE_SKIP_VERIFY). A read that fails exits 1.

The spec is checked with the loader and compiled before anything is written;
every generated Application is compared with its original, and what the spec
cannot express is reported field by field (also as a comment above the app).
--strict refuses to write when there is any such difference. Notes about what
the import changed on purpose go to stderr and into the file's header.

-o replaces only a file an earlier import wrote (it starts with the line
"# Imported by ` + "`deployctl import`" + `"), never a link, a device, a folder or a
file of yours.

Memory: a soft limit of 32 MiB plus 8 times the input (GOMEMLIMIT in the
environment replaces it).

Exit codes: 0 written, 1 a --live read failed, 3 invalid input or arguments
(nothing written).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Every argument problem in one pass, before the inputs are read.
			var problems []error
			var err error
			if o.StackFrom, err = importer.ParseStackFrom(stackFrom); err != nil {
				problems = append(problems, err)
			}
			if o.Name == "" {
				o.Name = "platform"
				if output != "" && output != "-" {
					o.Name = strings.TrimSuffix(filepath.Base(output), filepath.Ext(output))
				}
			}
			if !validName(o.Name) {
				problems = append(problems, fmt.Errorf("platform name %q: want a DNS-1123 label (--name)", o.Name))
			}
			if output != "" && output != "-" {
				if err := atomicfile.Check(output, Mark); err != nil {
					problems = append(problems, fmt.Errorf("-o %w (-o - writes to standard output)", err))
				}
			}
			if o.PruneUnexplained && !inventory.Given() {
				problems = append(problems, errors.New("--prune-unexplained goes with --manifests or --live: it drops the wave edges no resource needs"))
			}
			if o.Inventory, err = inventory.Open(); err != nil {
				problems = append(problems, err)
			}
			o.Context = cmd.Context()
			if len(problems) > 0 {
				return exitcode.With(exitcode.Invalid, errors.Join(problems...))
			}
			o.File = output
			if output == "" || output == "-" {
				o.File = "(stdout)"
			}
			var paths []string
			stdin := false
			for _, a := range args {
				if a == "-" {
					stdin = true
				} else {
					paths = append(paths, a)
				}
			}
			// Every input is read, each within readlimit.Import, and every
			// problem in any of them is reported together.
			in, _ := appread.Read(paths)
			if stdin {
				_ = in.ReadStdin(cmd.InOrStdin(), "(stdin)")
			}
			if err := in.Err(); err != nil {
				return exitcode.With(exitcode.Invalid, err)
			}
			limitMemory(in.Size())
			r, err := importer.Import(in, o)
			var fe *deps.FetchError
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
			report(cmd.ErrOrStderr(), r)
			if strict && len(r.Differences) > 0 {
				return exitcode.With(exitcode.Invalid, errors.New("--strict: some Applications have fields the spec cannot express (above); nothing was written"))
			}
			if output == "" || output == "-" {
				_, err = cmd.OutOrStdout().Write(r.YAML)
				return err
			}
			if err := atomicfile.Write(output, r.YAML, Mark); err != nil {
				if atomicfile.IsRefused(err) {
					return exitcode.With(exitcode.Invalid, err)
				}
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", output)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&stackFrom, "stack-from", "parent", "where stacks come from: label=KEY, annotation=KEY, parent or folder")
	f.StringVarP(&output, "output", "o", "", "spec file to write (default stdout)")
	f.StringVar(&o.Name, "name", "", "platform name (default: the output file's name, else platform)")
	f.StringVar(&o.ArgoCDNamespace, "argocd-namespace", "", "Argo CD's namespace (default: where most of the Applications are)")
	f.StringVar(&o.ArgoCDServer, "argocd-server", "", "host:port of argocd-server (default argocd-server.<namespace>.svc:443)")
	f.StringVar(&o.WorkflowNamespace, "workflow-namespace", importer.DefaultWorkflowNamespace, "Argo Workflows namespace")
	f.StringVar(&o.ServiceAccount, "service-account", importer.DefaultServiceAccount, "the workflow's ServiceAccount")
	f.StringVar(&o.Image, "image", "", "the deploystep image (default a placeholder to replace)")
	f.BoolVar(&strict, "strict", false, "write nothing if an Application has a field the spec cannot express")
	f.BoolVar(&o.PruneUnexplained, "prune-unexplained", false, "with --manifests or --live: drop the sync-wave dependencies no resource needs")
	inventory = inventoryflags.Register(f, "folder of rendered manifests, DIR/<app>/*.yaml: infer dependencies from what the apps deploy",
		"infer dependencies from what the Applications deploy, read from the Argo CD API (read-only)")
	return cmd
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

func report(w io.Writer, r *importer.Result) {
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
