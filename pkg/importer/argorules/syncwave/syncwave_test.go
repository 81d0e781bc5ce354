package syncwave

import "testing"

func TestPath(t *testing.T) {
	steps, err := ParsePath("root@0/storage@-20/x")
	if err != nil || len(steps) != 3 || steps[1] != (Step{"storage", -20}) || steps[2] != (Step{"x", 0}) {
		t.Fatalf("%v %v", steps, err)
	}
	if got := FormatPath(steps); got != "root@0/storage@-20/x@0" {
		t.Error(got)
	}
	for _, bad := range []string{"a@b", "a//b"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if steps, err := ParsePath(" "); steps != nil || err != nil {
		t.Errorf("empty: %v %v", steps, err)
	}
}
