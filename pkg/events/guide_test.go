package events

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/spec"
)

// The README's events paragraph names what Generate makes for this
// platform: the token Secret of its authSecret, the EventSource's Service
// and port, both endpoints, the Sensor and the CronWorkflow.
func TestGuideNamesTheGeneratedObjects(t *testing.T) {
	p := load(t, examples[0])
	p.Spec.Events = &spec.Events{Webhook: &spec.Webhook{Endpoint: "hooks/git/", Port: 8080, Branch: "prod",
		AuthSecret: &spec.SecretKeyRef{Name: "hook", Key: "bearer"}}, ValidateSchedule: "0 * * * *"}
	g, err := Guide(p)
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeAll(t, p)
	es := objs.eventSource
	svcPort := es.Spec.Service.Ports[0].Port
	for _, want := range []string{
		"kubectl -n argo create secret generic hook --from-literal=bearer=",
		"`argo/hook`, key `bearer`",
		"kubectl apply --server-side --force-conflicts --field-manager=deployctl -k events/",
		fmt.Sprintf("http://%s-eventsource-svc.%s:%d/hooks/git`", es.Name, es.Namespace, svcPort),
		"`/hooks/git/manual`",
		"push to `prod`",
		"Sensor `" + objs.sensor.Name + "`",
		"CronWorkflow `" + objs.cronWorkflow.Name + "` validates on `0 * * * *`",
	} {
		if !strings.Contains(g, want) {
			t.Errorf("guide lacks %q:\n%s", want, g)
		}
	}
	if svcPort != 8080 {
		t.Errorf("EventSource Service port %d, want the spec's 8080", svcPort)
	}
	p.Spec.Events.Webhook.Port = 0
	p.Spec.Events.Webhook.Endpoint = "/a b"
	if _, err := Guide(p); err == nil || !strings.Contains(err.Error(), "spec.events.webhook.endpoint") {
		t.Fatalf("an invalid endpoint: error %v", err)
	}
}
