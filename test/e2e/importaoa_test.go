//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"
)

// ---- 10: import an app-of-apps that Argo CD alone deployed (issue 12)

// The app-of-apps of testdata/gitrepo/aoa: the root aoa-root (applied with
// kubectl) syncs the child Applications of aoa/apps by their waves; the
// wave-1 child aoa-services is itself a parent of aoa/services.
const aoaRoot = "aoa-root"

var (
	// aoaParents: Applications whose source holds nothing but Applications.
	aoaParents = []string{aoaRoot, "aoa-services"}
	// aoaWaits, written by hand from the fixture's waves as Argo CD applies
	// them (each parent orders only its own children; a child of a parent
	// starts when its parent does; a parent is done when its children are):
	// per Application, those that must be Healthy before its sync starts.
	//
	//	aoa-root:     aoa-net -1 | aoa-db 0, aoa-cache 0 | aoa-services 1 | aoa-web 2
	//	aoa-services: aoa-api -2 | aoa-worker 0
	aoaWaits = map[string][]string{
		"aoa-net":    nil,
		"aoa-db":     {"aoa-net"},
		"aoa-cache":  {"aoa-net"},
		"aoa-api":    {"aoa-net", "aoa-db", "aoa-cache"},
		"aoa-worker": {"aoa-net", "aoa-db", "aoa-cache", "aoa-api"},
		"aoa-web":    {"aoa-net", "aoa-db", "aoa-cache", "aoa-api", "aoa-worker"},
	}
	// aoaParentWaits: the same for the parents, which exist only when Argo CD
	// alone deploys (deployctl creates their children itself).
	aoaParentWaits = map[string][]string{
		"aoa-services": {"aoa-net", "aoa-db", "aoa-cache"},
		"aoa-web":      {"aoa-services"},
	}
)

// appHealthKey is Argo CD's Application health check, removed from its
// defaults in 1.8; without it a parent is Healthy as soon as its children
// exist, and waves of Applications do not wait for anything.
const appHealthKey = "resource.customizations.health.argoproj.io_Application"

// appHealthLua is the check as Argo CD's 1.7 → 1.8 upgrade notes give it,
// plus the rules owners of nested app-of-apps need. Without them a parent
// looks Healthy to its own parent before its last wave is: between its
// waves (the next wave not created yet); right after its sync operation
// ends, which happens once the last wave is applied, while its status is
// still the one computed before that wave (Healthy, OutOfSync); and while
// a child just created reports Missing, which Argo CD leaves out of a
// parent's health for child Applications. All three were seen here:
// aoa-web synced 1–3 s before aoa-worker (wave 0 of the wave-1
// aoa-services) was Healthy.
const appHealthLua = `hs = {}
hs.status = "Progressing"
hs.message = ""
if obj.status ~= nil then
  if obj.status.health ~= nil then
    hs.status = obj.status.health.status
    if obj.status.health.message ~= nil then
      hs.message = obj.status.health.message
    end
  end
  if obj.status.operationState ~= nil and obj.status.operationState.phase == "Running" then
    hs.status = "Progressing"
    hs.message = "sync running"
  end
  if hs.status == "Missing" or hs.status == "Unknown" then
    hs.message = "health " .. hs.status
    hs.status = "Progressing"
  end
  if hs.status == "Healthy" and (obj.status.sync == nil or obj.status.sync.status ~= "Synced") then
    hs.status = "Progressing"
    hs.message = "not Synced yet"
  end
end
return hs
`

func aoaLeaves() []string {
	var out []string
	for a := range aoaWaits {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

func aoaAll() []string { return append(aoaLeaves(), aoaParents...) }

// aoaApps reads the fixture's Applications, by name, from Argo CD's namespace.
func (h *harness) aoaApps() (map[string]application, error) {
	all, err := h.applications()
	if err != nil {
		return nil, err
	}
	out := map[string]application{}
	for _, n := range aoaAll() {
		if a, ok := all[n]; ok {
			out[n] = a
		}
	}
	return out, nil
}

// aoaGone removes what is left of the fixture (an earlier run's) and waits
// until neither its Applications nor its workloads exist.
func (s *scenario) aoaGone(del bool) error {
	h := s.h
	if del {
		args := append([]string{"-n", argocdNS, "delete", "applications.argoproj.io", "--ignore-not-found", "--wait=true", "--timeout=180s"}, aoaAll()...)
		if _, err := h.kubectl(args...); err != nil {
			return err
		}
	}
	return h.waitFor("the app-of-apps' Applications and workloads gone", 3*time.Minute, func() (bool, error) {
		apps, err := h.aoaApps()
		if err != nil || len(apps) > 0 {
			return false, fmt.Errorf("Applications left: %v (%v)", keys(apps), err)
		}
		out, err := h.kubectl("-n", appNS, "get", "deploy,rs,pods", "-l", "app.kubernetes.io/part-of=e2e-aoa", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "" {
			return false, fmt.Errorf("workloads left: %s (%v)", strings.Join(strings.Fields(out), " "), err)
		}
		return true, nil
	})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkWaits: every Application of want started its first sync at or after
// from only once each Application it waits for was Healthy (Argo CD's
// records: history or operationState, health's last transition), and all
// are Healthy and Synced.
func checkWaits(apps map[string]application, from time.Time, want ...map[string][]string) (int, error) {
	var errs []string
	n := 0
	for _, w := range want {
		for _, b := range keys(w) {
			sb := syncStart(apps[b], from)
			if sb == nil {
				errs = append(errs, b+": no sync operation recorded")
				continue
			}
			for _, a := range w[b] {
				n++
				ha := apps[a].Status.Health.LastTransitionTime
				if ha == nil {
					errs = append(errs, a+": no health transition time")
				} else if sb.Before(ha.Time) {
					errs = append(errs, fmt.Sprintf("%s sync started %s, before %s was Healthy (%s)", b, sb.Format(time.TimeOnly), a, ha.Format(time.TimeOnly)))
				}
			}
		}
	}
	for _, name := range keys(apps) {
		a := apps[name]
		if a.Status.Health.Status != "Healthy" || a.Status.Sync.Status != "Synced" {
			errs = append(errs, fmt.Sprintf("%s %s/%s", name, a.Status.Health.Status, a.Status.Sync.Status))
		}
	}
	if len(errs) > 0 {
		return n, errors.New(strings.Join(errs, "; "))
	}
	return n, nil
}

// timeline: per app, its sync start and Healthy time in seconds after t0,
// in order of sync start.
func timeline(apps map[string]application, t0 time.Time) string {
	type ev struct {
		name        string
		start, heal time.Duration
	}
	var evs []ev
	for n, a := range apps {
		st := syncStart(a, t0)
		ht := a.Status.Health.LastTransitionTime
		if st == nil || ht == nil {
			continue
		}
		evs = append(evs, ev{n, st.Sub(t0), ht.Sub(t0)})
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].start != evs[j].start {
			return evs[i].start < evs[j].start
		}
		return evs[i].name < evs[j].name
	})
	var b []string
	for _, e := range evs {
		b = append(b, fmt.Sprintf("%s %.0f→%.0fs", strings.TrimPrefix(e.name, "aoa-"), e.start.Seconds(), e.heal.Seconds()))
	}
	return strings.Join(b, ", ")
}

// appSpec is what must be the same in the Applications deployctl creates
// as in those Argo CD alone made.
type appSpec struct {
	Spec struct {
		Project     string         `json:"project"`
		Source      map[string]any `json:"source"`
		Destination map[string]any `json:"destination"`
		SyncPolicy  map[string]any `json:"syncPolicy"`
	} `json:"spec"`
}

func (h *harness) aoaSpecs() (map[string]appSpec, error) {
	var l struct {
		Items []struct {
			Metadata struct{ Name string }
			appSpec
		}
	}
	if err := h.getJSON(&l, "-n", argocdNS, "get", "applications.argoproj.io"); err != nil {
		return nil, err
	}
	out := map[string]appSpec{}
	for _, it := range l.Items {
		if _, ok := aoaWaits[it.Metadata.Name]; ok {
			out[it.Metadata.Name] = it.appSpec
		}
	}
	return out, nil
}

// aoaSettings: the Quickstart's settings block for the imported platform.
func (s *scenario) aoaSettings(specFile string) (string, error) {
	return withSettings(s.qs["settings"], map[string]string{
		"SPEC":         specFile,
		"PLATFORM":     "aoa",
		"ARGOCD_URL":   argocdURL,
		"ARGOCD_CA":    filepath.Join(s.h.state, "pki", "ca.crt"),
		"ARGOCD_NS":    argocdNS,
		"WF_NS":        argoNS,
		"TOKEN_SECRET": "deployctl-argocd-token",
		"CA_SECRET":    "argocd-ca",
	})
}

// userEdits are the edits a user makes to the imported spec for this
// cluster: what Applications cannot say (the CA of argocd-server, the step
// image's pull policy). Each must apply exactly once.
func userEdits(yml string) (string, error) {
	for _, e := range [][2]string{
		{"\n  workflow:\n", "\n    caSecret: {name: argocd-ca, key: ca.crt}\n  workflow:\n"},
		{"\n    image: local.test/deploystep:dev\n", "\n    image: local.test/deploystep:dev\n    imagePullPolicy: Never\n"},
	} {
		if strings.Count(yml, e[0]) != 1 {
			return "", fmt.Errorf("the imported spec does not have %q exactly once:\n%s", e[0], yml)
		}
		yml = strings.Replace(yml, e[0], e[1], 1)
	}
	return yml, nil
}

func (s *scenario) importAoA() (string, error) {
	h := s.h
	work := filepath.Join(h.state, "aoa")
	_ = os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return "", err
	}
	// Only the app-of-apps in the cluster, so that the dump of every
	// Application is the app-of-apps' (the test platform goes first).
	if err := s.reset(); err != nil {
		return "", fmt.Errorf("reset: %w", err)
	}
	if err := s.aoaGone(true); err != nil {
		return "", err
	}

	// 1. Argo CD alone, as the owners run it: the Application health check
	// in argocd-cm, the root applied with kubectl.
	patch, _ := json.Marshal(map[string]any{"data": map[string]string{appHealthKey: appHealthLua}})
	if _, err := h.kubectl("-n", argocdNS, "patch", "configmap", "argocd-cm", "--type=merge", "-p", string(patch)); err != nil {
		return "", err
	}
	t0 := time.Now()
	if _, err := h.kubectl("apply", "-f", filepath.Join(h.e2eDir, "testdata", "gitrepo", "aoa", "root.yaml")); err != nil {
		return "", err
	}
	var alone map[string]application
	if err := h.waitFor("Argo CD alone: every Application of the app-of-apps Healthy and Synced", 6*time.Minute, func() (bool, error) {
		apps, err := h.aoaApps()
		if err != nil {
			return false, err
		}
		var bad []string
		for _, n := range aoaAll() {
			a, ok := apps[n]
			if !ok || a.Status.Health.Status != "Healthy" || a.Status.Sync.Status != "Synced" ||
				a.Status.OperationState == nil || a.Status.OperationState.Phase != "Succeeded" {
				bad = append(bad, fmt.Sprintf("%s=%s/%s", n, a.Status.Health.Status, a.Status.Sync.Status))
			}
		}
		alone = apps
		return len(bad) == 0, errors.New(strings.Join(bad, " "))
	}); err != nil {
		return "", err
	}
	aloneDur := time.Since(t0)
	nAlone, err := checkWaits(alone, t0, aoaWaits, aoaParentWaits)
	if err != nil {
		return "", fmt.Errorf("Argo CD alone broke its own waves (is %s set?): %w", appHealthKey, err)
	}
	aloneOrder := timeline(alone, t0)
	before, err := h.aoaSpecs()
	if err != nil {
		return "", err
	}

	// 2. The dump, the import and the generate, as a user types them.
	out, err := h.runDoc(work, "", []string{
		"kubectl get applications -A -o yaml > apps.yaml",
		"deployctl import apps.yaml --name aoa --image local.test/deploystep:dev -o aoa.yaml",
	})
	if err != nil {
		return "", err
	}
	imported := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "imported ") {
			imported = strings.TrimSpace(l)
		}
	}
	raw, err := os.ReadFile(filepath.Join(work, "aoa.yaml"))
	if err != nil {
		return "", err
	}
	edited, err := userEdits(string(raw))
	if err != nil {
		return "", err
	}
	specFile := filepath.Join(work, "aoa.yaml")
	if err := os.WriteFile(specFile, []byte(edited), 0o600); err != nil {
		return "", err
	}
	settings, err := s.aoaSettings(specFile)
	if err != nil {
		return "", err
	}
	if _, err := h.runDoc(work, settings, []string{s.qs["generate"], s.qs["apply"]}); err != nil {
		return "", err
	}

	// 3. Tear down the Argo-CD-only deployment: the root, cascading.
	t1 := time.Now()
	if _, err := h.kubectl("-n", argocdNS, "delete", "applications.argoproj.io", aoaRoot, "--wait=true", "--timeout=180s"); err != nil {
		return "", err
	}
	if err := s.aoaGone(false); err != nil {
		return "", fmt.Errorf("after deleting %s: %w", aoaRoot, err)
	}
	gone := time.Since(t1)

	// 4. deployctl deploys the import: the Quickstart's deploy block.
	runs, err := h.kubectl("-n", argoNS, "get", "workflows", "-l", "deployctl.dev/platform=aoa,deployctl.dev/action=deploy", "-o", "name")
	if err != nil {
		return "", err
	}
	if _, err := h.runDoc(work, settings, []string{s.qs["deploy"]}); err != nil {
		return "", err
	}
	aoa := &scenario{h: h, p: &platform{Name: "aoa"}}
	w, err := aoa.newRun(aoa.deployTemplate(), strings.Fields(runs))
	if err != nil {
		return "", err
	}
	if w.Status.Phase != "Succeeded" {
		return "", fmt.Errorf("deploy of the import: %s", w.describeWith(h.stepLogs(w)))
	}
	apps, err := h.aoaApps()
	if err != nil {
		return "", err
	}
	var errs []string
	if got, want := keys(apps), aoaLeaves(); !reflect.DeepEqual(got, want) {
		errs = append(errs, fmt.Sprintf("Applications %v, want %v (the parents are not apps: deployctl creates their children)", got, want))
	}
	after, err := h.aoaSpecs()
	if err != nil {
		return "", err
	}
	for _, n := range aoaLeaves() {
		if !reflect.DeepEqual(before[n], after[n]) {
			b, _ := json.Marshal(before[n])
			a, _ := json.Marshal(after[n])
			errs = append(errs, fmt.Sprintf("%s: spec %s, Argo CD alone had %s", n, a, b))
		}
	}
	nDeploy, err := checkWaits(apps, w.Status.StartedAt.Time, aoaWaits)
	if err != nil {
		errs = append(errs, "deployctl: "+err.Error())
	}
	deployOrder := timeline(apps, w.Status.StartedAt.Time)

	// 5. deployctl tears it down (the Quickstart's block), nothing left.
	if _, err := h.runDoc(work, settings, []string{s.qs["teardown"]}); err != nil {
		errs = append(errs, err.Error())
	} else if err := s.aoaGone(false); err != nil {
		errs = append(errs, "after deployctl's teardown: "+err.Error())
	}
	if len(errs) > 0 {
		return "", errors.New(strings.Join(errs, "; "))
	}
	return fmt.Sprintf("Argo CD alone (%s set by hand): %d Applications Healthy in %s, %d wave constraints held; sync→Healthy s: %s; dump → import: %s; root deleted, all gone in %s; Quickstart generate+apply+deploy: %s Succeeded in %s, the same %d Applications (same spec), %d constraints held, all Healthy; sync→Healthy s: %s; Quickstart teardown: nothing left",
		appHealthKey, len(alone), sec(aloneDur), nAlone, aloneOrder, imported, sec(gone), w.Metadata.Name,
		sec(w.Status.FinishedAt.Sub(w.Status.StartedAt.Time)), len(apps), nDeploy, deployOrder), nil
}
