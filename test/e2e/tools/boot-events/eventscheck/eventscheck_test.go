// Package eventscheck judges the generated events/ folder with Argo Events'
// own code, at the version the bootstrap e2e path runs (v1.9.7; the product
// links v1.9.6's API types only): the controller's validation of the
// EventSource, Sensor and EventBus, and what the webhook EventSource and
// the Sensor do with a request (issue 26, Phase 3):
//
//   - a body that is not JSON never becomes an event: the webhook handler
//     marshals events.WebhookEventData around the raw body and answers 400
//     when that fails (sources/webhook HandleRoute), before dispatching;
//   - an event whose body has no ref, another branch, a tag, or a ref that
//     only starts with the branch is dropped by the Sensor's data filter
//     (sensors/dependencies Filter): nothing is triggered;
//   - the push of the watched branch passes.
//
// Run by `make e2e-boot` (cd test/e2e/tools/boot-events && go test ./eventscheck).
package eventscheck

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/argoproj/argo-events/pkg/apis/events/v1alpha1"
	"github.com/argoproj/argo-events/pkg/eventsources/common/webhook"
	"github.com/argoproj/argo-events/pkg/eventsources/events"
	"github.com/argoproj/argo-events/pkg/reconciler/eventbus"
	"github.com/argoproj/argo-events/pkg/reconciler/eventsource"
	"github.com/argoproj/argo-events/pkg/reconciler/sensor"
	"github.com/argoproj/argo-events/pkg/sensors/dependencies"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The platforms generated into the repository's generated/ folder.
var platforms = []string{"minimal", "reference-platform"}

func generatedDir(t *testing.T, platform string) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "..", "generated", platform, "events"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func decode(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

type objects struct {
	es  v1alpha1.EventSource
	s   v1alpha1.Sensor
	bus v1alpha1.EventBus
}

func load(t *testing.T, platform string) *objects {
	t.Helper()
	dir := generatedDir(t, platform)
	o := &objects{}
	decode(t, filepath.Join(dir, "eventsource.yaml"), &o.es)
	decode(t, filepath.Join(dir, "sensor.yaml"), &o.s)
	decode(t, filepath.Join(dir, "eventbus.yaml"), &o.bus)
	return o
}

// Argo Events' controller accepts the objects, and every webhook endpoint
// requires the bearer token of a Secret.
func TestTheControllerAcceptsThem(t *testing.T) {
	for _, p := range platforms {
		o := load(t, p)
		if err := eventbus.ValidateEventBus(&o.bus); err != nil {
			t.Errorf("%s: EventBus: %v", p, err)
		}
		if err := eventsource.ValidateEventSource(&o.es); err != nil {
			t.Errorf("%s: EventSource: %v", p, err)
		}
		if err := sensor.ValidateSensor(&o.s, &o.bus); err != nil {
			t.Errorf("%s: Sensor: %v", p, err)
		}
		if len(o.es.Spec.Webhook) != 2 {
			t.Errorf("%s: %d webhook endpoints, want 2", p, len(o.es.Spec.Webhook))
		}
		for name, wh := range o.es.Spec.Webhook {
			if err := webhook.ValidateWebhookContext(&wh.WebhookContext); err != nil {
				t.Errorf("%s: endpoint %s: %v", p, name, err)
			}
			if a := wh.AuthSecret; a == nil || a.Name == "" || a.Key == "" {
				t.Errorf("%s: endpoint %s accepts anyone (authSecret %+v)", p, name, a)
			}
		}
	}
}

// eventData is what the webhook EventSource puts on the bus for a POST:
// the headers, the raw body and the metadata, marshalled (HandleRoute).
// It fails for a body that is not JSON: the handler then answers 400.
func eventData(body string) ([]byte, error) {
	raw := json.RawMessage(body)
	h := http.Header{"Content-Type": {"application/json"}, "Authorization": {"*** Masked Auth Secret ***"}}
	return json.Marshal(&events.WebhookEventData{Header: h, Body: &raw})
}

func TestBodiesThatAreNotJSONNeverBecomeEvents(t *testing.T) {
	for _, body := range []string{"", "not json", "ref=refs/heads/main", `{"ref": "refs/heads/main"`, "{'ref': 'refs/heads/main'}"} {
		if data, err := eventData(body); err == nil {
			t.Errorf("body %q became an event: %s", body, data)
		}
	}
}

// Only the push of the watched branch passes the Sensor's dependency on the
// Git endpoint; the manual dependency has no filter (any JSON body).
func TestOnlyThePushOfTheBranchTriggers(t *testing.T) {
	for _, p := range platforms {
		o := load(t, p)
		var git *v1alpha1.EventDependency
		for i, d := range o.s.Spec.Dependencies {
			switch d.EventName {
			case "git":
				git = &o.s.Spec.Dependencies[i]
			case "manual":
				if d.Filters != nil {
					t.Errorf("%s: the manual dependency filters %+v", p, d.Filters)
				}
			}
		}
		if git == nil || git.Filters == nil || len(git.Filters.Data) != 1 {
			t.Fatalf("%s: no filtered git dependency: %+v", p, git)
		}
		branch := strings.TrimSuffix(strings.TrimPrefix(git.Filters.Data[0].Value[0], `^refs/heads/`), `$`)
		for body, want := range map[string]bool{
			`{"ref":"refs/heads/` + branch + `","after":"abc"}`: true,
			`{"after":"abc"}`:                                    false,
			`{"ref":"refs/heads/feature"}`:                       false,
			`{"ref":"refs/heads/` + branch + `-x"}`:              false,
			`{"ref":"refs/heads/x-` + branch + `"}`:              false,
			`{"ref":"refs/tags/` + branch + `"}`:                 false,
			`{"ref":["refs/heads/` + branch + `"]}`:              false,
			`{"ref":{"name":"refs/heads/` + branch + `"}}`:       false,
			`{"repository":{"ref":"refs/heads/` + branch + `"}}`: false,
			`null`:  false,
			`[]`:    false,
			`"ref"`: false,
		} {
			data, err := eventData(body)
			if err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			ev := &v1alpha1.Event{Data: data, Context: &v1alpha1.EventContext{Time: metav1.Now()}}
			got, _ := dependencies.Filter(ev, git.Filters, git.FiltersLogicalOperator)
			if got != want {
				t.Errorf("%s: body %s passes %v, want %v", p, body, got, want)
			}
		}
	}
}
