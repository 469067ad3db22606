package apply

import (
	"math"

	"runsdesk/runtime"
)

// PricingSpec is a configuration's `pricing:`: the price of 1000 prompt and 1000 completion
// tokens.
type PricingSpec struct {
	PromptPer1K     *float64 `yaml:"prompt_per_1k,omitempty"`
	CompletionPer1K *float64 `yaml:"completion_per_1k,omitempty"`
}

// BudgetSpec is a configuration's `budget:`: the most one run may spend in tokens and in cost.
type BudgetSpec struct {
	MaxTotalTokens *int64   `yaml:"max_total_tokens,omitempty"`
	MaxCost        *float64 `yaml:"max_cost,omitempty"`
}

// Limits of pricing, budget and context window, as the catalog columns hold them.
const (
	maxPricePer1K    = 1000
	priceDecimals    = 8
	maxBudgetCost    = 9999
	costDecimals     = 6
	maxBudgetTokens  = 4_000_000_000
	maxContextTokens = 100_000_000
)

// budget checks a configuration's pricing, budget and max_context_tokens.
func (v *validator) budget(path string, s ConfigurationSpec) (runtime.Pricing, runtime.Budget, int) {
	var p runtime.Pricing
	var b runtime.Budget
	if s.Pricing != nil {
		ppath := joinKey(path, "pricing")
		p.PromptPer1K = v.amount(joinKey(ppath, "prompt_per_1k"), s.Pricing.PromptPer1K, maxPricePer1K, priceDecimals)
		p.CompletionPer1K = v.amount(joinKey(ppath, "completion_per_1k"), s.Pricing.CompletionPer1K, maxPricePer1K, priceDecimals)
	}
	if s.Budget != nil {
		bpath := joinKey(path, "budget")
		if t := s.Budget.MaxTotalTokens; t != nil {
			b.MaxTotalTokens = *t
			if *t < 1 || *t > maxBudgetTokens {
				v.c.add(joinKey(bpath, "max_total_tokens"), "must be between 1 and %d (leave it out for no token bound)", maxBudgetTokens)
			}
		}
		if c := s.Budget.MaxCost; c != nil {
			cpath := joinKey(bpath, "max_cost")
			b.MaxCost = v.amount(cpath, c, maxBudgetCost, costDecimals)
			switch {
			case *c == 0:
				v.c.add(cpath, "must be more than 0 (leave it out for no cost bound)")
			case p == runtime.Pricing{}:
				v.c.add(cpath, "needs pricing (prompt_per_1k, completion_per_1k): without prices every run costs 0")
			}
		}
	}
	var window int
	if w := s.MaxContextTokens; w != nil {
		window = *w
		if window < 1 || window > maxContextTokens {
			v.c.add(joinKey(path, "max_context_tokens"), "must be between 1 and %d (leave it out for no bound)", maxContextTokens)
		}
	}
	return p, b, window
}

// amount checks a price or cost: absent is 0; else between 0 and most, with at most
// decimals decimal places (what its column keeps).
func (v *validator) amount(path string, x *float64, most float64, decimals int) float64 {
	if x == nil {
		return 0
	}
	scale := math.Pow10(decimals)
	switch scaled := *x * scale; {
	case *x < 0 || *x > most:
		v.c.add(path, "must be between 0 and %g", most)
	case math.Abs(scaled-math.Round(scaled)) > 1e-6:
		v.c.add(path, "at most %d decimal places", decimals)
	}
	return math.Round(*x*scale) / scale
}
