package apply

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"runsdesk/runtime"
	"runsdesk/runtime/model"
	"runsdesk/runtime/quorum"
	"runsdesk/runtime/subject"
)

// Limits of a configuration.
const (
	// DefaultMaxIterations is what a configuration without max_iterations gets.
	DefaultMaxIterations = runtime.DefaultMaxIterations
	maxIdentifierLen     = 150
	maxNameLen           = 255
	maxModelLen          = 150
	maxBaseURLLen        = 2048
	maxEnvNameLen        = 150
	maxProviderTimeout   = 10 * time.Minute
)

var (
	// identifierRule is lower case only: the database compares identifiers without case, so
	// "Refunds" and "refunds" would be one configuration.
	identifierRule = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	envNameRule    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// configurations checks every configuration and returns them in file order.
func (v *validator) configurations(specs []ConfigurationSpec) []runtime.Configuration {
	out := make([]runtime.Configuration, 0, len(specs))
	seen := map[string]int{}
	for i, s := range specs {
		path := joinIndex("configurations", i)
		switch first, dup := seen[s.Identifier]; {
		case s.Identifier == "":
			v.c.add(joinKey(path, "identifier"), "required")
		case len(s.Identifier) > maxIdentifierLen || !identifierRule.MatchString(s.Identifier):
			v.c.add(joinKey(path, "identifier"), "must be 1 to %d characters from a-z, 0-9, _ and -, starting with a letter or digit", maxIdentifierLen)
		case dup:
			v.c.add(joinKey(path, "identifier"), "%q is already defined by configurations[%d]", s.Identifier, first)
		default:
			seen[s.Identifier] = i
		}
		out = append(out, v.configuration(path, s))
	}
	return out
}

// configuration checks one configuration.
func (v *validator) configuration(path string, s ConfigurationSpec) runtime.Configuration {
	c := runtime.Configuration{
		Identifier:            s.Identifier,
		Name:                  s.Name,
		SystemPrompt:          s.SystemPrompt,
		MaxIterations:         DefaultMaxIterations,
		RequireSecondApprover: s.RequireSecondApprover,
		Tools:                 s.Tools,
	}
	if c.Tools == nil {
		c.Tools = []string{}
	}
	switch {
	case s.Name == "":
		v.c.add(joinKey(path, "name"), "required")
	case utf8.RuneCountInString(s.Name) > maxNameLen:
		v.c.add(joinKey(path, "name"), "longer than %d characters", maxNameLen)
	}
	if len(s.SystemPrompt) > maxTextBytes {
		v.c.add(joinKey(path, "system_prompt"), "longer than %d bytes", maxTextBytes)
	}
	if s.MaxIterations != nil {
		c.MaxIterations = *s.MaxIterations
		if c.MaxIterations < 1 || c.MaxIterations > runtime.DefaultMaxIterations {
			v.c.add(joinKey(path, "max_iterations"), "must be between 1 and %d, got %d", runtime.DefaultMaxIterations, c.MaxIterations)
		}
	}
	listed := map[string]bool{}
	for j, name := range s.Tools {
		tpath := joinIndex(joinKey(path, "tools"), j)
		switch {
		case name == "":
			v.c.add(tpath, "empty tool name")
		case listed[name]:
			v.c.add(tpath, "tool %q is listed twice", name)
		case !v.isDefined(name):
			v.c.add(tpath, "tool %q is not defined (not in this file's tools, not stored, not built in)", name)
		default:
			v.offers(tpath, s.Kind == KindExternal, name)
		}
		listed[name] = true
	}
	if b, err := json.Marshal(c.Tools); err == nil && len(b) > maxTextBytes {
		v.c.add(joinKey(path, "tools"), "the list is longer than %d bytes", maxTextBytes)
	}
	c.Wait = v.wait(joinKey(path, "wait"), s.Wait, nil)
	c.Pricing, c.Budget, c.MaxContextTokens = v.budget(path, s)
	c.Guardrails = v.guardrails(joinKey(path, "guardrails"), s.Guardrails)
	c.Notify = v.notify(joinKey(path, "notify"), s.Notify)
	if _, err := subject.Parse(s.Subject); err != nil {
		v.c.add(joinKey(path, "subject"), "%v", err)
	}
	c.Subject = s.Subject
	c.NoOutput = s.KeepOutput != nil && !*s.KeepOutput
	c.Privacy, c.SupportSees = v.privacy(path, s)
	c.Assignment = v.assignment(joinKey(path, "assignment"), s.Assignment)
	c.Retention = v.retention(joinKey(path, "retention"), s.Retention)
	c.Quorum = v.quorum(path, s.ApprovalsRequired, s.AllowAutomaticVote)
	if c.External = v.external(path, s); c.External != nil {
		return c
	}
	if s.Provider == nil {
		v.c.add(joinKey(path, "provider"), "required (kind: openai or scripted)")
		return c
	}
	c.Provider = v.provider(joinKey(path, "provider"), *s.Provider, listed)
	return c
}

// quorum checks the quorum keys under path: approvals_required, when present, 1 to
// quorum.MaxRequired.
func (v *validator) quorum(path string, required *int, automatic bool) quorum.Policy {
	p := quorum.Policy{AutomaticVote: automatic}
	if required == nil {
		return p
	}
	p.Required = *required
	if err := p.Check(); err != nil || p.Required == 0 {
		v.c.add(joinKey(path, "approvals_required"), "must be between 1 and %d, got %d", quorum.MaxRequired, p.Required)
	}
	return p
}

// isDefined reports whether a configuration may name tool: the file defines it, it is
// stored, or it is built into the program.
func (v *validator) isDefined(name string) bool {
	_, inFile := v.defined[name]
	return inFile || v.stored[name] || v.builtin[name]
}

// provider checks a provider block; listed is the configuration's tool list.
func (v *validator) provider(path string, s ProviderSpec, listed map[string]bool) model.Settings {
	set := model.Settings{Kind: s.Kind, BaseURL: s.BaseURL, Model: s.Model, APIKeyEnv: s.APIKeyEnv}
	if s.Timeout != nil {
		set.Timeout = time.Duration(*s.Timeout).Truncate(time.Millisecond)
	}
	set.MaxRetries = s.MaxRetries
	switch s.Kind {
	case "":
		v.c.add(joinKey(path, "kind"), "required (openai or scripted)")
		return set
	case model.KindOpenAI:
		v.openAI(path, s)
	case model.KindScripted:
		set.Script = v.script(path, s, listed)
	default:
		v.c.add(joinKey(path, "kind"), "unknown kind %q (want openai or scripted)", truncate(s.Kind, 40))
		return set
	}
	if !v.c.anyWithin(path) {
		if _, err := model.New(set, nil, v.getenv); err != nil {
			v.c.add(path, "%v", err)
		}
	}
	return set
}

// openAI checks the keys of an openai provider.
func (v *validator) openAI(path string, s ProviderSpec) {
	if p := baseURLProblem(s.BaseURL); p != "" {
		v.c.add(joinKey(path, "base_url"), "%s", p)
	}
	switch {
	case s.Model == "":
		v.c.add(joinKey(path, "model"), "required for kind openai")
	case len(s.Model) > maxModelLen:
		v.c.add(joinKey(path, "model"), "longer than %d bytes", maxModelLen)
	}
	if s.APIKeyEnv != "" {
		switch {
		case len(s.APIKeyEnv) > maxEnvNameLen || !envNameRule.MatchString(s.APIKeyEnv):
			v.c.add(joinKey(path, "api_key_env"), "must be the name of an environment variable (letters, digits and _, not starting with a digit)")
		case v.getenv(s.APIKeyEnv) == "":
			v.c.add(joinKey(path, "api_key_env"), "environment variable %s is not set", s.APIKeyEnv)
		}
	}
	if t := s.Timeout; t != nil && (*t < 0 || time.Duration(*t) > maxProviderTimeout) {
		v.c.add(joinKey(path, "timeout"), "must be between 0 (60s) and %s", maxProviderTimeout)
	}
	if r := s.MaxRetries; r != nil && (*r < 0 || *r > model.MaxMaxRetries) {
		v.c.add(joinKey(path, "max_retries"), "must be between 0 and %d", model.MaxMaxRetries)
	}
	if len(s.Script) > 0 {
		v.c.add(joinKey(path, "script"), "only kind scripted uses a script")
	}
}

// baseURLProblem says why raw is not an acceptable provider endpoint, "" when it is.
func baseURLProblem(raw string) string {
	if raw == "" {
		return "required for kind openai"
	}
	u, err := url.Parse(raw)
	switch {
	case len(raw) > maxBaseURLLen:
		return "longer than 2048 bytes"
	case err != nil:
		return "not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an absolute http or https URL"
	case u.Host == "" || u.Hostname() == "":
		return "has no host"
	case u.User != nil:
		return "must not carry credentials; name the key's environment variable in api_key_env"
	}
	return ""
}

// script checks a scripted provider's turns: every call names a tool that is defined and
// listed in the configuration's tools, with arguments that are a mapping or a string.
func (v *validator) script(path string, s ProviderSpec, listed map[string]bool) []model.Turn {
	for _, k := range []struct {
		key string
		set bool
	}{
		{"base_url", s.BaseURL != ""}, {"model", s.Model != ""}, {"api_key_env", s.APIKeyEnv != ""},
		{"timeout", s.Timeout != nil}, {"max_retries", s.MaxRetries != nil},
	} {
		if k.set {
			v.c.add(joinKey(path, k.key), "only kind openai uses %s", k.key)
		}
	}
	spath := joinKey(path, "script")
	if len(s.Script) == 0 {
		v.c.add(spath, "required for kind scripted: a list of turns ({content, tool_calls})")
		return nil
	}
	turns := make([]model.Turn, 0, len(s.Script))
	for n, t := range s.Script {
		tpath := joinIndex(spath, n)
		turn := model.Turn{Content: t.Content}
		for i, call := range t.ToolCalls {
			cpath := joinIndex(joinKey(tpath, "tool_calls"), i)
			switch {
			case call.Name == "":
				v.c.add(joinKey(cpath, "name"), "required")
			case !v.isDefined(call.Name):
				v.c.add(joinKey(cpath, "name"), "tool %q is not defined (not in this file's tools, not stored, not built in)", call.Name)
			case !listed[call.Name]:
				v.c.add(joinKey(cpath, "name"), "tool %q is not in this configuration's tools, so the call would be refused", call.Name)
			}
			if a := bytes.TrimSpace(call.Arguments); len(a) > 0 && a[0] != '{' && a[0] != '"' {
				v.c.add(joinKey(cpath, "arguments"), "must be a mapping (or a string, sent verbatim)")
			}
			turn.ToolCalls = append(turn.ToolCalls, model.ScriptedCall{Name: call.Name, Arguments: rawJSON(call.Arguments)})
		}
		turns = append(turns, turn)
	}
	return turns
}

// privacy checks a configuration's `privacy:` (metadata when absent; none is its alias) and
// `support_sees:` (redacted when absent).
func (v *validator) privacy(path string, s ConfigurationSpec) (mode, support runtime.Privacy) {
	mode, support = runtime.PrivacyMetadata, runtime.PrivacyRedacted
	if s.Privacy != "" {
		var ok bool
		if mode, ok = runtime.ParsePrivacy(s.Privacy); !ok {
			v.c.add(joinKey(path, "privacy"), "must be metadata, none, redacted or full, got %q", s.Privacy)
		}
	}
	switch runtime.Privacy(s.SupportSees) {
	case "":
	case runtime.PrivacyRedacted, runtime.PrivacyFull:
		support = runtime.Privacy(s.SupportSees)
	default:
		v.c.add(joinKey(path, "support_sees"), "must be redacted or full, got %q", s.SupportSees)
	}
	return mode, support
}

// assignment checks a configuration's `assignment:`: auto is round_robin or least_loaded and
// then needs a pool of distinct usernames; a pool without auto is a problem too.
func (v *validator) assignment(path string, s *AssignmentSpec) runtime.AssignmentPolicy {
	if s == nil {
		return runtime.AssignmentPolicy{}
	}
	p := runtime.AssignmentPolicy{ReviewersMayAssign: s.ReviewersMayAssign, Strict: s.Strict, Auto: s.Auto, Pool: s.Pool}
	switch s.Auto {
	case "":
		if len(s.Pool) > 0 {
			v.c.add(joinKey(path, "pool"), "needs auto: round_robin or least_loaded")
		}
		return p
	case runtime.AutoRoundRobin, runtime.AutoLeastLoaded:
	default:
		v.c.add(joinKey(path, "auto"), "must be round_robin or least_loaded, got %q", s.Auto)
	}
	if len(s.Pool) == 0 {
		v.c.add(joinKey(path, "pool"), "required with auto: the usernames runs are assigned to")
	}
	seen := map[string]bool{}
	for i, name := range s.Pool {
		switch {
		case strings.TrimSpace(name) == "":
			v.c.add(joinIndex(joinKey(path, "pool"), i), "empty username")
		case seen[name]:
			v.c.add(joinIndex(joinKey(path, "pool"), i), "%q is listed twice", name)
		}
		seen[name] = true
	}
	return p
}
