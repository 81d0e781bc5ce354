package yamlnode

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// EncodeSpliced, stack by stack and in each stack app by app (as render
// does), writes the bytes one encoding would: comments, literal blocks with
// blank lines, flow maps, at every depth.
func TestEncodeSpliced(t *testing.T) {
	src := `# head

# more
apiVersion: deployctl.dev/v1alpha1
spec:
  argocd: {namespace: argocd}
  stacks:
    # above the first
    - name: a
      apps:
        # above an app
        #
        # with a blank comment line
        - name: x
          helm:
            values: "a: 1\n\nb:\n  - 2\n\n\n"
          dependsOn:
            - y # why
    - name: b
      apps: [{name: z}]
  healthOptions: {x: 1}
`
	for _, style := range []bool{false, true} {
		var one, two yaml.Node
		if err := yaml.Unmarshal([]byte(src), &one); err != nil {
			t.Fatal(err)
		}
		_ = yaml.Unmarshal([]byte(src), &two)
		if style {
			styleAll(&one)
			styleAll(&two)
		}
		want, err := Encode(&one)
		if err != nil {
			t.Fatal(err)
		}
		stacks := Get(Get(two.Content[0], "spec"), "stacks")
		items := stacks.Content
		got, err := EncodeSpliced(&two, stacks, len(items), func(i int) ([]byte, error) {
			apps := Get(items[i], "apps")
			if apps.Style&yaml.FlowStyle != 0 {
				return Encode(Item(items[i]))
			}
			each := apps.Content
			return EncodeSpliced(Item(items[i]), apps, len(each), func(j int) ([]byte, error) { return Encode(Item(each[j])) })
		})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("spliced:\n%s\nin one go:\n%s", got, want)
		}
	}
}

func styleAll(n *yaml.Node) { Style(n.Content[0], "") }
