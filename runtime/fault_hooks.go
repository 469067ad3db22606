package runtime

// Fault points on the resume path (Config.Hooks). The claim, the decision and its event
// commit together, so "after claim" is also "after the event".
const (
	HookAfterValidation = "after_validation"
	HookAfterClaim      = "after_claim"
	HookMidTool         = "mid_tool"
	HookBeforeSettle    = "before_settle"
)
