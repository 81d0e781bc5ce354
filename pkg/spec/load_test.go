package spec

import (
	"testing"
	"time"
)

func TestLoadExamples(t *testing.T) {
	for _, f := range []string{"../../examples/minimal.yaml", "../../examples/reference-platform.yaml"} {
		d, err := Read(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if d.Platform.Metadata.Name == "" {
			t.Fatalf("%s: no name", f)
		}
	}
}

func TestNormalizeAppliesDefaults(t *testing.T) {
	p, err := LoadFile("../../examples/minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db := p.Spec.Stacks[1].Apps[0]
	if db.Timeouts.Sync.Duration != 10*time.Minute || db.Timeouts.Health.Duration != 15*time.Minute {
		t.Errorf("database timeouts = %+v", db.Timeouts)
	}
	web := p.Spec.Stacks[1].Apps[1]
	if web.Timeouts.Health.Duration != 5*time.Minute || web.Retry.Limit != 3 {
		t.Errorf("web defaults = %+v %+v", web.Timeouts, web.Retry)
	}
	if web.Source.RepoURL != "https://git.example.com/platform.git" || web.Source.TargetRevision != "main" || web.Source.Path != "apps/web" {
		t.Errorf("web source = %+v", web.Source)
	}
	if db.Source.RepoURL != "https://git.example.com/platform.git" || db.Source.Chart != "" || db.Source.Path != "apps/database" {
		t.Errorf("db source = %+v", db.Source)
	}
	if web.Destination.Server != DefaultServer || web.Project != "default" {
		t.Errorf("web destination/project = %+v %q", web.Destination, web.Project)
	}
	if p.Spec.ArgoCD.TokenSecret.Name != DefaultTokenSecret {
		t.Errorf("token secret = %+v", p.Spec.ArgoCD.TokenSecret)
	}
}
