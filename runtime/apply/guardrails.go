package apply

import (
	"time"

	"runsdesk/runtime/guardrail"
)

// GuardrailSpec is one entry of a configuration's `guardrails:`: a deny pattern or an HTTP
// endpoint, and what it checks (`on: [arguments, output]`).
type GuardrailSpec struct {
	DenyPattern *string            `yaml:"deny_pattern,omitempty"`
	HTTP        *GuardrailHTTPSpec `yaml:"http,omitempty"`
	On          []string           `yaml:"on,omitempty"`
}

// GuardrailHTTPSpec is an HTTP guardrail's `http:` block.
type GuardrailHTTPSpec struct {
	URL     string    `yaml:"url,omitempty"`
	Timeout *Duration `yaml:"timeout,omitempty"`
}

// maxGuardrails bounds how many guardrails one configuration may have.
const maxGuardrails = 20

// guardrails checks a configuration's guardrails, compiling every deny pattern, and returns
// them as stored.
func (v *validator) guardrails(path string, specs []GuardrailSpec) []guardrail.Spec {
	if len(specs) > maxGuardrails {
		v.c.add(path, "more than %d guardrails", maxGuardrails)
	}
	out := make([]guardrail.Spec, 0, len(specs))
	for i, s := range specs {
		out = append(out, v.guardrail(joinIndex(path, i), s))
	}
	if len(out) == 0 {
		return nil
	}
	if !v.c.anyWithin(path) {
		if _, err := guardrail.New(out, nil); err != nil {
			v.c.add(path, "%v", err)
		}
	}
	return out
}

// guardrail checks one guardrail.
func (v *validator) guardrail(path string, s GuardrailSpec) guardrail.Spec {
	out := guardrail.Spec{On: s.On}
	switch {
	case s.DenyPattern == nil && s.HTTP == nil:
		v.c.add(path, "needs deny_pattern or http")
	case s.DenyPattern != nil && s.HTTP != nil:
		v.c.add(path, "has both deny_pattern and http; write each as its own guardrail")
	case s.DenyPattern != nil:
		out.DenyPattern = *s.DenyPattern
		ppath := joinKey(path, "deny_pattern")
		if *s.DenyPattern == "" {
			v.c.add(ppath, "must not be empty")
		} else if _, err := guardrail.CompilePattern(*s.DenyPattern); err != nil {
			v.c.add(ppath, "not a valid RE2 regular expression: %s", truncate(err.Error(), 200))
		}
	default:
		hpath := joinKey(path, "http")
		out.HTTP = &guardrail.HTTPSpec{URL: s.HTTP.URL}
		if p := guardrail.URLProblem(s.HTTP.URL); p != "" {
			v.c.add(joinKey(hpath, "url"), "%s", p)
		}
		if t := s.HTTP.Timeout; t != nil {
			d := time.Duration(*t).Truncate(time.Millisecond)
			out.HTTP.TimeoutMS = d.Milliseconds()
			if d < time.Millisecond || d > guardrail.MaxTimeout {
				v.c.add(joinKey(hpath, "timeout"), "must be between 1ms and %s (leave it out for %s)", guardrail.MaxTimeout, guardrail.DefaultTimeout)
			}
		}
	}
	opath := joinKey(path, "on")
	if len(s.On) == 0 {
		v.c.add(opath, "required: a list of what it checks (arguments, output)")
	}
	seen := map[string]bool{}
	for j, on := range s.On {
		switch {
		case on != guardrail.OnArguments && on != guardrail.OnOutput:
			v.c.add(joinIndex(opath, j), "unknown %q (want arguments or output)", truncate(on, 40))
		case seen[on]:
			v.c.add(joinIndex(opath, j), "%q is listed twice", on)
		}
		seen[on] = true
	}
	return out
}
