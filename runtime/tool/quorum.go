package tool

import "runsdesk/runtime/quorum"

// QuorumTool is a tool with its own quorum keys (quorum.Policy).
type QuorumTool interface{ Quorum() quorum.Policy }

// QuorumOf is t's quorum keys (zero when it sets none: the configuration's apply).
func QuorumOf(t Tool) quorum.Policy {
	if q, ok := t.(QuorumTool); ok {
		return q.Quorum()
	}
	return quorum.Policy{}
}
