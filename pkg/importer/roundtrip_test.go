package importer

import (
	"strings"
	"testing"

	"github.com/deployctl/deployctl/pkg/importer/appdiff"
	"github.com/deployctl/deployctl/pkg/importer/appread"
	"github.com/deployctl/deployctl/pkg/spec"
)

// The self-check (check) is what keeps an importer bug from reaching the
// user: a spec built wrong is refused, or each of its differences from the
// Applications reported, in whichever of hundreds of apps it is (the
// compile is streamed, app by app).
func TestCheckCatchesBrokenSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		brk  func(p *spec.Platform) (app string) // breaks the built spec
		want []appdiff.Difference                // when the check passes
		gone bool                                // the app is not in the spec
		err  string                              // when it refuses
	}{
		{name: "unbroken", brk: func(*spec.Platform) string { return "" }},
		{
			name: "wrong source path in the last app",
			brk: func(p *spec.Platform) string {
				a := last(p)
				a.Source.Path = "elsewhere"
				return a.Name
			},
			want: []appdiff.Difference{{Field: "spec.source.path", Original: `"apps/APP"`, Generated: `"elsewhere"`}},
		},
		{
			name: "label lost in the first app",
			brk: func(p *spec.Platform) string {
				a := &p.Spec.Stacks[0].Apps[0]
				a.Labels = nil
				return a.Name
			},
			want: []appdiff.Difference{{Field: "metadata.labels", Original: `{"team":"team-0"}`}},
		},
		{
			name: "app left out",
			brk: func(p *spec.Platform) string {
				s := &p.Spec.Stacks[len(p.Spec.Stacks)-1]
				name := s.Apps[len(s.Apps)-1].Name
				s.Apps = s.Apps[:len(s.Apps)-1]
				return name
			},
			want: []appdiff.Difference{{Field: "(the whole Application)", Original: "present"}},
			gone: true,
		},
		{
			name: "cycle",
			brk: func(p *spec.Platform) string {
				first, lastStack := &p.Spec.Stacks[0], p.Spec.Stacks[len(p.Spec.Stacks)-1]
				first.DependsOn = append(first.DependsOn, lastStack.Name)
				return ""
			},
			err: "internal: the imported spec has a cycle (a bug in the importer; nothing was written)",
		},
		{
			name: "invalid name",
			brk: func(p *spec.Platform) string {
				last(p).Name = "Not_A_Label"
				return ""
			},
			err: "internal: the imported spec does not load (a bug in the importer; nothing was written)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := &appread.Input{}
			if err := in.Parse("dump.yaml", "dump", dump(300)); err != nil {
				t.Fatal(err)
			}
			b := newBuilder(Options{Name: "p", StackFrom: StackFrom{Kind: "parent"}})
			if err := b.build(in); err != nil {
				t.Fatal(err)
			}
			app := tc.brk(b.res.Platform)
			err := b.check()
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("got %v, want %s…", err, tc.err)
				}
				if b.res.YAML != nil {
					t.Error("a spec to write after a refused check")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				tc.want[i].App = app
				tc.want[i].Original = strings.ReplaceAll(tc.want[i].Original, "APP", app)
			}
			if len(b.res.Differences) != len(tc.want) || (len(tc.want) == 1 && b.res.Differences[0] != tc.want[0]) {
				t.Errorf("differences %+v, want %+v", b.res.Differences, tc.want)
			}
			// Written above the app, when it is in the spec.
			if inSpec := strings.Contains(string(b.res.YAML), "- name: "+app+"\n"); app != "" && inSpec == tc.gone {
				t.Errorf("app %s in the spec: %v", app, inSpec)
			}
			if len(tc.want) > 0 && !tc.gone && !strings.Contains(string(b.res.YAML), tc.want[0].String()) {
				t.Errorf("the spec does not say %s above the app", tc.want[0].Field)
			}
		})
	}
}

// last is the last app of the last stack.
func last(p *spec.Platform) *spec.App {
	s := &p.Spec.Stacks[len(p.Spec.Stacks)-1]
	return &s.Apps[len(s.Apps)-1]
}
