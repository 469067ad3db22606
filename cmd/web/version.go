package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// runVersion prints what the binary was built from: the module version, the commit (with
// "(modified)" for a work tree with changes), the commit's time, which is the build's
// reference time, and the Go version; "unknown" for what the build did not record.
func runVersion(_ context.Context, c *cli, args []string) int {
	f := c.newFlags("version", "[flags]")
	if ok, code := f.parse(args); !ok {
		return code
	}
	if f.NArg() > 0 {
		return f.fail("unexpected argument %q", f.Arg(0))
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return c.failf("version", "the binary carries no build information")
	}
	v := buildVersion(info)
	fmt.Fprintf(c.stdout, "runsdesk %s\ncommit  %s\nbuilt   %s\ngo      %s\n", v.module, v.commit, v.time, v.goVersion)
	return exitOK
}

// version is what runVersion prints.
type version struct {
	module, commit, time, goVersion string
}

// buildVersion reads the version out of info: the main module's version, vcs.revision
// (and vcs.modified), vcs.time and the Go version.
func buildVersion(info *debug.BuildInfo) version {
	v := version{module: orUnknown(info.Main.Version), commit: "unknown", time: "unknown", goVersion: orUnknown(info.GoVersion)}
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.commit = orUnknown(s.Value)
		case "vcs.time":
			v.time = orUnknown(s.Value)
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && v.commit != "unknown" {
		v.commit += " (modified)"
	}
	return v
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
