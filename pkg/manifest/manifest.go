// Package manifest turns typed Kubernetes objects into the plain form that
// is applied: no status, no null creationTimestamp, no empty noise. Both
// the YAML files and the Application manifests the step creates use it, so
// what is in Git and what is in the cluster are the same object.
package manifest

import "encoding/json"

// Clean returns obj as a JSON map without status and creationTimestamp.
func Clean(obj any) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	prune(m)
	return m, nil
}

// JSON is Clean as compact JSON (encoding/json sorts map keys: stable bytes).
func JSON(obj any) ([]byte, error) {
	m, err := Clean(obj)
	if err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// noise lists fields that typed objects serialise as empty maps when unset
// (non-pointer structs) and that mean nothing when empty. Other empty maps
// are kept: `emptyDir: {}` or `suspend: {}` mean something.
var noise = map[string]bool{"metadata": true, "resources": true, "inputs": true, "outputs": true, "arguments": true}

func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			prune(c)
			if cm, ok := c.(map[string]any); ok && len(cm) == 0 && noise[k] {
				delete(t, k)
			}
		}
	case []any:
		for _, c := range t {
			prune(c)
		}
	}
}
