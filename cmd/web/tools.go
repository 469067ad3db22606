package main

import (
	"runsdesk/runtime/demo"
	"runsdesk/runtime/tool"
)

// builtinTools returns the in-process tools this process registers: the demo tools with
// --demo, none otherwise.
func builtinTools(withDemo bool) []tool.Tool {
	if withDemo {
		return demo.Tools()
	}
	return nil
}
