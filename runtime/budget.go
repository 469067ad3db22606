package runtime

// Pricing is what a configuration's model calls cost, per 1000 tokens (any currency; the desk
// only adds it up). Zero prices make every run cost 0.
type Pricing struct {
	PromptPer1K     float64
	CompletionPer1K float64
}

// Cost is the estimated cost of one model call that read prompt and wrote completion tokens.
func (p Pricing) Cost(prompt, completion int64) float64 {
	return float64(prompt)/1000*p.PromptPer1K + float64(completion)/1000*p.CompletionPer1K
}

// MaxCallTokens is the most tokens (prompt plus completion) a provider is believed to report for
// one model call; a larger or a negative report is counted at the estimate instead.
const MaxCallTokens = 1_000_000

// Budget bounds one run's spending over all its segments: MaxTotalTokens (prompt plus
// completion) and MaxCost (in Pricing's currency); 0 leaves a bound off.
type Budget struct {
	MaxTotalTokens int64
	MaxCost        float64
}

// Allows reports whether a model call may be made by a run that has used tokens and cost so
// far, when the call is estimated to read nextPrompt tokens: the run's totals plus the call's
// prompt (and its price) must stay within every bound that is set.
func (b Budget) Allows(tokens int64, cost float64, nextPrompt int64, p Pricing) bool {
	if b.MaxTotalTokens > 0 && tokens+nextPrompt > b.MaxTotalTokens {
		return false
	}
	return b.MaxCost <= 0 || cost+p.Cost(nextPrompt, 0) <= b.MaxCost
}
