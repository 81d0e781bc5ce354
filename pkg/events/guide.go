package events

import (
	"fmt"
	"strings"

	"github.com/deployctl/deployctl/pkg/spec"
)

// Guide is the platform README's paragraph on events/: what must exist
// before it is applied (Argo Events, the webhook token Secret), the command,
// and where a Git server sends its pushes. It names this platform's objects
// as Generate makes them.
func Guide(p *spec.Platform) (string, error) {
	s, err := Resolve(p)
	if err != nil {
		return "", err
	}
	n := ObjectNames(p.Metadata.Name)
	var b strings.Builder
	fmt.Fprintf(&b, "**Steady state** (`events/`, Argo Events): a push to `%s` deploys (Sensor `%s`), and CronWorkflow `%s` validates on `%s`, never two at once. "+
		"It needs Argo Events installed (its controller and CRDs) and, first, the Secret `%s/%s`, key `%s` (`spec.events.webhook.authSecret`): the bearer token both webhook endpoints require. "+
		"The EventSource's pod does not start without it. The bootstrap's gitops-handoff writes it from `vault_deployctl_webhook_token`, the executor from the secrets directory's `webhook-token`; by hand:\n\n",
		s.Branch, n.Sensor, n.CronWorkflow, s.ValidateSchedule, s.Namespace, s.AuthSecret.Name, s.AuthSecret.Key)
	fmt.Fprintf(&b, "```sh\nkubectl -n %s create secret generic %s --from-literal=%s=\"$(openssl rand -hex 32)\"\nkubectl apply --server-side --force-conflicts --field-manager=deployctl -k events/\n```\n\n",
		s.Namespace, s.AuthSecret.Name, s.AuthSecret.Key)
	fmt.Fprintf(&b, "Point the Git server's push webhook (JSON, push events only) at `http://%s-eventsource-svc.%s:%d%s` with the header `Authorization: Bearer <token>`; `%s` takes any JSON body and deploys. "+
		"Without the header, or with another token, the answer is `401` and nothing runs. GitHub cannot send that header: see deployctl's README, \"Argo Events and steady state\".\n",
		n.EventSource, s.Namespace, s.Port, s.Endpoint, s.ManualEndpoint)
	return b.String(), nil
}
