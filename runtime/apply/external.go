package apply

import (
	"encoding/json"
	"slices"
	"strings"

	"runsdesk/runtime"
)

// KindExternal is the `kind:` of a configuration whose runs are requests that agents running
// elsewhere create (runtime.ExternalPolicy).
const KindExternal = "external"

// maxCallerLen is the longest service account name a caller may have.
const maxCallerLen = 100

// external checks the keys that tell an external configuration from an agent one and returns
// its policy, nil for an agent configuration. An external configuration names its callers
// and has none of the keys of a model loop.
func (v *validator) external(path string, s ConfigurationSpec) *runtime.ExternalPolicy {
	switch s.Kind {
	case "":
		if len(s.Callers) > 0 {
			v.c.add(joinKey(path, "callers"), "only kind: external takes callers")
		}
		if s.AdHoc {
			v.c.add(joinKey(path, "ad_hoc"), "only kind: external takes ad_hoc")
		}
		if len(s.CallbackHosts) > 0 {
			v.c.add(joinKey(path, "callback_hosts"), "only kind: external takes callback_hosts")
		}
		if s.CallbackSecretEnv != "" {
			v.c.add(joinKey(path, "callback_secret_env"), "only kind: external takes callback_secret_env")
		}
		return nil
	case KindExternal:
	default:
		v.c.add(joinKey(path, "kind"), "must be external (or absent for an agent configuration), got %q", truncate(s.Kind, 40))
		return nil
	}
	for _, k := range []struct {
		key string
		set bool
	}{
		{"provider", s.Provider != nil}, {"system_prompt", s.SystemPrompt != ""}, {"max_iterations", s.MaxIterations != nil},
		{"pricing", s.Pricing != nil}, {"budget", s.Budget != nil}, {"max_context_tokens", s.MaxContextTokens != nil},
		{"guardrails", len(s.Guardrails) > 0},
	} {
		if k.set {
			v.c.add(joinKey(path, k.key), "kind: external runs no model, so it takes no %s", k.key)
		}
	}
	if len(s.Callers) == 0 {
		v.c.add(joinKey(path, "callers"), "required for kind: external: the names of the service accounts that may create requests")
	}
	seen := map[string]bool{}
	for i, name := range s.Callers {
		cpath := joinIndex(joinKey(path, "callers"), i)
		switch {
		case strings.TrimSpace(name) == "" || len(name) > maxCallerLen:
			v.c.add(cpath, "must be a service account name of 1 to %d bytes", maxCallerLen)
		case seen[name]:
			v.c.add(cpath, "%q is listed twice", name)
		}
		seen[name] = true
	}
	v.callbacks(path, s)
	p := &runtime.ExternalPolicy{Callers: slices.Clone(s.Callers), AdHoc: s.AdHoc,
		CallbackHosts: slices.Clone(s.CallbackHosts), CallbackSecretEnv: s.CallbackSecretEnv}
	if b, err := json.Marshal(p); err == nil && len(b) > runtime.MaxExternalPolicyBytes {
		v.c.add(joinKey(path, "callers"), "callers and callback_hosts take %d bytes stored, more than %d: list fewer callers (one service account may serve many agents)", len(b), runtime.MaxExternalPolicyBytes)
	}
	return p
}

// Limits of callback_hosts.
const (
	maxCallbackHosts   = 50
	maxCallbackHostLen = 253
)

// callbacks checks an external configuration's callback keys: callback_hosts (host names or
// IP addresses, without scheme, port or path, each once) and callback_secret_env come
// together.
func (v *validator) callbacks(path string, s ConfigurationSpec) {
	hpath := joinKey(path, "callback_hosts")
	switch {
	case len(s.CallbackHosts) > 0 && s.CallbackSecretEnv == "":
		v.c.add(joinKey(path, "callback_secret_env"), "required with callback_hosts: the name of the environment variable holding the secret callbacks are signed with")
	case len(s.CallbackHosts) == 0 && s.CallbackSecretEnv != "":
		v.c.add(hpath, "required with callback_secret_env: the hosts a request's callback_url may name")
	case len(s.CallbackHosts) > maxCallbackHosts:
		v.c.add(hpath, "at most %d hosts, got %d", maxCallbackHosts, len(s.CallbackHosts))
	}
	if s.CallbackSecretEnv != "" {
		v.envName(joinKey(path, "callback_secret_env"), s.CallbackSecretEnv)
	}
	seen := map[string]bool{}
	for i, host := range s.CallbackHosts {
		key := strings.ToLower(host)
		switch {
		case host == "" || len(host) > maxCallbackHostLen || strings.ContainsAny(host, "/:@?#[] \t"):
			v.c.add(joinIndex(hpath, i), "must be a host name or IPv4 address of 1 to %d bytes, without scheme, port or path", maxCallbackHostLen)
		case seen[key]:
			v.c.add(joinIndex(hpath, i), "%q is listed twice", host)
		}
		seen[key] = true
	}
}

// offers checks that a configuration may offer tool name: an external configuration only
// tools that declare what may be asked (no http, no mcp, not built in), any other
// configuration only tools that something runs.
func (v *validator) offers(path string, external bool, name string) {
	switch declared := v.declared[name]; {
	case external && v.builtin[name]:
		v.c.add(path, "tool %q is built into this program; kind: external offers only tools without http: and mcp:", name)
	case external && !declared:
		v.c.add(path, "tool %q calls an endpoint; kind: external offers only tools without http: and mcp:, since nothing runs them", name)
	case !external && declared:
		v.c.add(path, "tool %q has no http: or mcp:, so nothing would run it; only kind: external configurations may offer it", name)
	}
}

// storedOffers checks the stored configurations the file leaves as they are against the tools
// it defines: a tool the file turns into a declared one (or out of one) must still fit every
// stored configuration that offers it.
func (v *validator) storedOffers(f *File, stored []runtime.Configuration) {
	inFile := map[string]bool{}
	for _, s := range f.Configurations {
		inFile[s.Identifier] = true
	}
	for _, cfg := range stored {
		if inFile[cfg.Identifier] {
			continue
		}
		for _, name := range cfg.Tools {
			if i, ok := v.defined[name]; ok {
				v.offersStored(joinIndex("tools", i), cfg, name)
			}
		}
	}
}

// offersStored words offers's refusal for tool name defined at path, offered by the stored
// configuration cfg.
func (v *validator) offersStored(path string, cfg runtime.Configuration, name string) {
	switch declared := v.declared[name]; {
	case cfg.IsExternal() && !declared:
		v.c.add(path, "the stored external configuration %q offers %q, so it must have neither http: nor mcp:", cfg.Identifier, name)
	case !cfg.IsExternal() && declared:
		v.c.add(path, "the stored configuration %q offers %q, which needs http: or mcp: (only kind: external configurations may offer a tool without them)", cfg.Identifier, name)
	}
}
