// Package importcmd is the command line of `deployctl import`: a spec from
// existing Argo CD Applications (the package is not named import, a Go
// keyword). The work is pkg/importer's (Command.Run).
package importcmd

import (
	"github.com/spf13/cobra"

	"github.com/deployctl/deployctl/pkg/cmd/deployctl/internal/inventoryflags"
	"github.com/deployctl/deployctl/pkg/importer"
)

// NewCommand returns `deployctl import PATH...`.
func NewCommand() *cobra.Command {
	var c importer.Command
	o := &c.Options
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
			c.Paths = args
			return c.Run(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.StackFrom, "stack-from", "parent", "where stacks come from: label=KEY, annotation=KEY, parent or folder")
	f.StringVarP(&c.Output, "output", "o", "", "spec file to write (default stdout)")
	f.StringVar(&o.Name, "name", "", "platform name (default: the output file's name, else platform)")
	f.StringVar(&o.ArgoCDNamespace, "argocd-namespace", "", "Argo CD's namespace (default: where most of the Applications are)")
	f.StringVar(&o.ArgoCDServer, "argocd-server", "", "host:port of argocd-server (default argocd-server.<namespace>.svc:443)")
	f.StringVar(&o.WorkflowNamespace, "workflow-namespace", importer.DefaultWorkflowNamespace, "Argo Workflows namespace")
	f.StringVar(&o.ServiceAccount, "service-account", importer.DefaultServiceAccount, "the workflow's ServiceAccount")
	f.StringVar(&o.Image, "image", "", "the deploystep image (default a placeholder to replace)")
	f.BoolVar(&c.Strict, "strict", false, "write nothing if an Application has a field the spec cannot express")
	f.BoolVar(&o.PruneUnexplained, "prune-unexplained", false, "with --manifests or --live: drop the sync-wave dependencies no resource needs")
	inventoryflags.Register(f, &c.Inventory, "folder of rendered manifests, DIR/<app>/*.yaml: infer dependencies from what the apps deploy",
		"infer dependencies from what the Applications deploy, read from the Argo CD API (read-only)")
	return cmd
}
