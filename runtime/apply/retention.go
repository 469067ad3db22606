package apply

import (
	"time"

	"runsdesk/runtime/retention"
)

// retention checks the `retention:` s at path and returns the policy it sets: each key
// given between retention.Min and retention.Max, in whole seconds; each absent key zero, its
// default.
func (v *validator) retention(path string, s *RetentionSpec) retention.Policy {
	var p retention.Policy
	if s == nil {
		return p
	}
	for _, k := range []struct {
		class retention.Class
		d     *Duration
		out   *time.Duration
	}{
		{retention.Outputs, s.Outputs, &p.Outputs},
		{retention.Transcripts, s.Transcripts, &p.Transcripts},
		{retention.Runs, s.Runs, &p.Runs},
	} {
		if k.d == nil {
			continue
		}
		d := time.Duration(*k.d)
		if d < retention.Min || d > retention.Max {
			v.c.add(joinKey(path, string(k.class)), "must be between 1h and 36500d, like 30d")
			continue
		}
		*k.out = d.Truncate(time.Second)
	}
	return p
}
