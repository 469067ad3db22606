package engine

import (
	"fmt"

	"runsdesk/runtime"
)

func newError(code runtime.Code, runUUID, format string, args ...any) *runtime.Error {
	return &runtime.Error{Code: code, RunUUID: runUUID, Message: fmt.Sprintf(format, args...)}
}

func storeError(runUUID string, err error) *runtime.Error {
	return &runtime.Error{Code: runtime.CodeRunStateUnavailable, RunUUID: runUUID, Message: "the run's stored state could not be read or written", Err: err}
}
