package warm

import (
	_ "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	_ "github.com/argoproj/argo-cd/v2/util/lua"
	_ "github.com/argoproj/argo-workflows/v3/workflow/validate"
	_ "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	_ "github.com/santhosh-tekuri/jsonschema/v5"
	_ "github.com/spf13/cobra"
	_ "sigs.k8s.io/yaml"
	_ "gopkg.in/yaml.v3"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/dynamic"
	_ "github.com/argoproj/argo-events/pkg/apis/events/v1alpha1"
)
