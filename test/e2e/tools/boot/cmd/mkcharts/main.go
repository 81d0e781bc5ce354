// Command mkcharts builds, at test time, the Helm charts the generated
// bootstrap (pkg/bootstrap) installs, and serves them as a chart repository
// on loopback (issue 26). No chart repository is reachable from the e2e
// machine and no third-party chart is copied into deployctl's repository, so
// each chart is built from its component's own release manifests as shipped
// in its Go module:
//
//	argo-cd         manifests/install.yaml of github.com/argoproj/argo-cd/v3
//	argo-workflows  manifests/base/crds/minimal + manifests/cluster-install-no-crds
//	                (kustomize) of github.com/argoproj/argo-workflows/v4
//	argo-events     manifests/install.yaml of github.com/argoproj/argo-events
//	sealed-secrets  the chart the module ships itself (helm/sealed-secrets),
//	                only its image defaults pointed at the local image
//
// The images are replaced by local ones (<registry>/<name>:<module version>),
// every object gets the release's app.kubernetes.io/instance label, the
// namespaces become the release's, and the workloads get the names of the
// upstream charts (<release>-workflow-controller, ...). The values the
// bootstrap's roles set are honoured under the upstream charts' names (see
// specs); values.schema.json refuses any other, so a value the built chart
// would silently ignore fails the install instead.
//
//	mkcharts build -o DIR -url URL -argo-cd MODDIR -argo-workflows MODDIR \
//	  -argo-events MODDIR -sealed-secrets MODDIR [-broken argo-workflows]
//	mkcharts serve -dir DIR -addr 127.0.0.1:PORT
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "build":
		fs := flag.NewFlagSet("build", flag.ExitOnError)
		out := fs.String("o", "", "output directory (the chart repository)")
		url := fs.String("url", "", "the repository's URL, e.g. http://127.0.0.1:8879")
		var src Sources
		var opts Options
		fs.StringVar(&src.ArgoCD, "argo-cd", "", "module directory of github.com/argoproj/argo-cd/v3@VERSION")
		fs.StringVar(&src.ArgoWorkflows, "argo-workflows", "", "module directory of github.com/argoproj/argo-workflows/v4@VERSION")
		fs.StringVar(&src.ArgoEvents, "argo-events", "", "module directory of github.com/argoproj/argo-events@VERSION")
		fs.StringVar(&src.SealedSecrets, "sealed-secrets", "", "module directory of github.com/bitnami-labs/sealed-secrets@VERSION")
		fs.StringVar(&opts.Registry, "registry", "local.test", "registry of the local images")
		fs.StringVar(&opts.NATSImage, "nats-image", "", "JetStream server image of the EventBus (default <registry>/nats:latest)")
		fs.StringVar(&opts.StandIn, "stand-in-image", "", "image of the EventBus's reloader and metrics exporter (default <registry>/pause:3.10)")
		fs.StringVar(&opts.JetStreamVersion, "jetstream-version", "2.10.10", "the EventBus JetStream version the argo-events chart lists")
		broken := fs.String("broken", "", "comma-separated charts to build a second, never-Ready version <v>-broken of")
		_ = fs.Parse(os.Args[2:])
		if *out == "" || *url == "" {
			fs.Usage()
			os.Exit(2)
		}
		if *broken != "" {
			opts.Broken = strings.Split(*broken, ",")
		}
		if opts.NATSImage == "" {
			opts.NATSImage = opts.Registry + "/nats:latest"
		}
		if opts.StandIn == "" {
			opts.StandIn = opts.Registry + "/pause:3.10"
		}
		charts, err := BuildAll(src, opts)
		if err != nil {
			log.Fatal(err)
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			log.Fatal(err)
		}
		var archives []string
		for _, c := range charts {
			p, err := c.Package(*out)
			if err != nil {
				log.Fatal(err)
			}
			archives = append(archives, p)
			fmt.Printf("%s %s %s\n", c.Name, c.Version, p)
		}
		if err := WriteIndex(*out, *url, charts, archives); err != nil {
			log.Fatal(err)
		}
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		dir := fs.String("dir", "", "the chart repository directory")
		addr := fs.String("addr", "127.0.0.1:8879", "listen address (loopback)")
		_ = fs.Parse(os.Args[2:])
		if *dir == "" || !strings.HasPrefix(*addr, "127.") {
			log.Fatal("serve: -dir is required and -addr must be a loopback address")
		}
		srv := &http.Server{Addr: *addr, Handler: http.FileServer(http.Dir(*dir)), ReadHeaderTimeout: 10 * time.Second}
		log.Printf("serving %s on http://%s", *dir, *addr)
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: mkcharts build -o DIR -url URL -argo-cd DIR -argo-workflows DIR -argo-events DIR -sealed-secrets DIR [-broken CHART,...]\n       mkcharts serve -dir DIR -addr 127.0.0.1:PORT")
	os.Exit(2)
}

// BuildAll builds the chart of every given source, and the broken variants.
func BuildAll(src Sources, opts Options) ([]*Chart, error) {
	var out []*Chart
	brokenOf := map[string]bool{}
	for _, b := range opts.Broken {
		brokenOf[b] = true
	}
	add := func(name string, f func(broken bool) (*Chart, error)) error {
		for _, broken := range []bool{false, true} {
			if broken && !brokenOf[name] {
				continue
			}
			c, err := f(broken)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			out = append(out, c)
		}
		delete(brokenOf, name)
		return nil
	}
	var errs []error
	if src.ArgoCD != "" {
		errs = append(errs, add("argo-cd", func(b bool) (*Chart, error) { return build(argoCD(), src.ArgoCD, opts, b) }))
	}
	if src.ArgoWorkflows != "" {
		errs = append(errs, add("argo-workflows", func(b bool) (*Chart, error) { return build(argoWorkflows(), src.ArgoWorkflows, opts, b) }))
	}
	if src.ArgoEvents != "" {
		errs = append(errs, add("argo-events", func(b bool) (*Chart, error) { return build(argoEvents(), src.ArgoEvents, opts, b) }))
	}
	if src.SealedSecrets != "" {
		errs = append(errs, add("sealed-secrets", func(b bool) (*Chart, error) {
			return fromModuleChart(src.SealedSecrets, "helm/sealed-secrets", opts, b,
				image{Upstream: "docker.io/bitnami/sealed-secrets-controller", Key: "image", Local: "sealed-secrets-controller"})
		}))
	}
	for b := range brokenOf {
		errs = append(errs, fmt.Errorf("-broken %s: no such chart built", b))
	}
	return out, errors.Join(errs...)
}

func containers(o object) []map[string]any {
	var out []map[string]any
	pod := mapAt(o, "spec", "template", "spec")
	for _, list := range []string{"initContainers", "containers"} {
		cs, _ := pod[list].([]any)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// argoCD: install.yaml without the components the e2e's multi-call argocd
// binary does not hold (Dex, notifications, ApplicationSet controller).
// Values: global.image, redis.image, configs.cm, configs.rbac, configs.params.
func argoCD() spec {
	dropped := []string{"argocd-dex-server", "argocd-notifications-controller", "argocd-applicationset-controller"}
	return spec{
		Name:        "argo-cd",
		Description: "Argo CD (server, repo-server, application controller, redis).",
		Paths:       []string{"manifests/install.yaml"},
		Images: []image{
			{Upstream: "quay.io/argoproj/argocd", Key: "global.image", Local: "argocd"},
			{Upstream: "public.ecr.aws/docker/library/redis", Key: "redis.image", Local: "redis"},
		},
		Drop: func(kind, name string) bool {
			if kind != "Deployment" && kind != "Service" && kind != "NetworkPolicy" {
				return false
			}
			for _, d := range dropped {
				if strings.HasPrefix(name, d) {
					return true
				}
			}
			return false
		},
		Blocks: []block{
			{Object: "ConfigMap/argocd-cm", Path: []string{"data"}, Values: "configs.cm"},
			{Object: "ConfigMap/argocd-rbac-cm", Path: []string{"data"}, Values: "configs.rbac"},
			{Object: "ConfigMap/argocd-cmd-params-cm", Path: []string{"data"}, Values: "configs.params"},
		},
		Edit: func(_ string, o object, _ *placeholders, _ Options) error {
			kind := str(o, "kind")
			if !podSpecKinds[kind] {
				return nil
			}
			pod := mapAt(o, "spec", "template", "spec")
			// copyutil (the CMP sidecars' binary) and secret-init (an
			// `argocd admin` command) need what the multi-call binary
			// lacks; the redis password Secret is templates/redis-secret.yaml.
			delete(pod, "initContainers")
			for _, c := range containers(o) {
				args, _ := c["args"].([]any)
				if len(args) == 0 {
					continue
				}
				a0, _ := args[0].(string)
				bin, ok := strings.CutPrefix(a0, "/usr/local/bin/")
				if !ok || !strings.HasPrefix(bin, "argocd-") {
					continue
				}
				c["command"] = []any{"/usr/local/bin/argocd"}
				c["args"] = args[1:]
				env, _ := c["env"].([]any)
				// The image has no gpg: GnuPG verification off (the repo-server
				// exits at start when it cannot initialise the keyring).
				c["env"] = append([]any{map[string]any{"name": "ARGOCD_BINARY_NAME", "value": bin},
					map[string]any{"name": "ARGOCD_GPG_ENABLED", "value": "false"}}, env...)
			}
			return nil
		},
		Extra: map[string]string{"redis-secret.yaml": redisSecret},
	}
}

// redisSecret is what upstream's secret-init container makes: the password
// of argocd-redis, kept across upgrades.
const redisSecret = `{{- $old := lookup "v1" "Secret" .Release.Namespace "argocd-redis" }}
apiVersion: v1
kind: Secret
metadata:
  name: argocd-redis
  labels:
    app.kubernetes.io/part-of: argocd
    app.kubernetes.io/instance: {{ .Release.Name }}
type: Opaque
data:
  auth: {{ if and $old $old.data }}{{ index $old.data "auth" }}{{ else }}{{ randAlphaNum 32 | b64enc }}{{ end }}
`

// argoWorkflows: the cluster install with the minimal CRDs (the upstream
// chart's default). Values: controller.image, server.image, executor.image.
func argoWorkflows() spec {
	return spec{
		Name:        "argo-workflows",
		Description: "Argo Workflows (workflow controller, argo server).",
		Paths:       []string{"manifests/base/crds/minimal", "manifests/cluster-install-no-crds"},
		Images: []image{
			{Upstream: "quay.io/argoproj/workflow-controller", Key: "controller.image", Local: "workflow-controller"},
			{Upstream: "quay.io/argoproj/argocli", Key: "server.image", Local: "argocli"},
			{Upstream: "quay.io/argoproj/argoexec", Key: "executor.image", Local: "argoexec"},
		},
		Edit: func(key string, o object, ph *placeholders, _ Options) error {
			if key != "Deployment/workflow-controller" {
				return nil
			}
			// The controller's built-in executor image is upstream's: the
			// chart passes executor.image (as upstream's chart does).
			for _, c := range containers(o) {
				args, _ := c["args"].([]any)
				c["args"] = append(args, "--executor-image",
					ph.Inline(`"{{ .Values.executor.image.repository }}:{{ .Values.executor.image.tag }}"`),
					"--executor-image-pull-policy", ph.Inline("{{ .Values.global.imagePullPolicy }}"))
			}
			return nil
		},
		Rename: map[string]string{
			"Deployment/workflow-controller": "workflow-controller",
			"Deployment/argo-server":         "server",
			"Service/argo-server":            "server",
		},
	}
}

// argoEvents: install.yaml (cluster-wide controller). Values: global.image,
// configs.jetstream.versions (its default: one version, the local NATS
// image; reloader and metrics exporter are stand-ins).
func argoEvents() spec {
	return spec{
		Name:        "argo-events",
		Description: "Argo Events (controller manager).",
		Paths:       []string{"manifests/install.yaml"},
		Images:      []image{{Upstream: "quay.io/argoproj/argo-events", Key: "global.image", Local: "argo-events"}},
		Rename:      map[string]string{"Deployment/controller-manager": "controller-manager"},
		Blocks: []block{{
			Object: "ConfigMap/argo-events-controller-config",
			Path:   []string{"data", "@yaml:controller-config.yaml", "eventBus", "jetstream", "versions"},
			Values: "configs.jetstream.versions",
		}},
		Edit: func(key string, o object, ph *placeholders, opts Options) error {
			switch key {
			case "Deployment/controller-manager":
				// The image of the EventSource and Sensor pods, and how they
				// pull it: the controller says Always unless IMAGE_PULL_POLICY
				// is set, and the local images exist only in the node's
				// containerd (ErrImagePull on the e2e cluster).
				for _, c := range containers(o) {
					env, _ := c["env"].([]any)
					for _, e := range env {
						if m, ok := e.(map[string]any); ok && m["name"] == "ARGO_EVENTS_IMAGE" {
							m["value"] = ph.Inline(`"{{ .Values.global.image.repository }}:{{ .Values.global.image.tag }}"`)
						}
					}
					c["env"] = append(env, map[string]any{"name": "IMAGE_PULL_POLICY", "value": "IfNotPresent"})
				}
			case "ConfigMap/argo-events-controller-config":
				data := mapAt(o, "data")
				var cfg object
				if err := yamlUnmarshal(str(o, "data", "controller-config.yaml"), &cfg); err != nil {
					return err
				}
				bus := mapAt(cfg, "eventBus")
				// eventBus.nats (NATS Streaming, the deprecated native bus)
				// stays as upstream lists it: the controller refuses a config
				// without it (seen on the e2e cluster); its images are not
				// built here, and the generated EventBus is JetStream.
				mapAt(bus, "jetstream")["versions"] = []any{map[string]any{
					"version": opts.JetStreamVersion, "natsImage": opts.NATSImage,
					"metricsExporterImage": opts.StandIn, "configReloaderImage": opts.StandIn,
					"startCommand": "/nats-server",
				}}
				s, err := yamlMarshal(cfg)
				if err != nil {
					return err
				}
				data["controller-config.yaml"] = s
			}
			return nil
		},
	}
}
