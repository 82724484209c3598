package main

import (
	"runtime/debug"
	"sync"
)

// Set at build time by make dist:
// -ldflags "-X main.version=$(git describe --always --dirty) -X main.commit=$(git rev-parse HEAD)".
// Empty, they come from the build information the go command embeds.
var (
	version = ""
	commit  = ""
)

// buildStamp is what a binary knows of its own build.
type buildStamp struct {
	Version string // a release tag, git describe, or "devel"
	Commit  string // the VCS revision, "-dirty" when built from modified files; "" unknown
}

// String is the version recorded in reports and printed by --version.
func (b buildStamp) String() string {
	if b.Commit == "" {
		return b.Version
	}
	return b.Version + " (commit " + b.Commit + ")"
}

// stampOf prefers the -X values, then the module version (set by go install
// module@version), then the VCS settings go build records inside a checkout.
func stampOf(bi *debug.BuildInfo, ldVersion, ldCommit string) buildStamp {
	s := buildStamp{Version: ldVersion, Commit: ldCommit}
	if bi == nil {
		bi = &debug.BuildInfo{}
	}
	if s.Version == "" {
		s.Version = "devel"
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			s.Version = v
		}
	}
	if s.Commit == "" {
		var rev string
		var modified bool
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				rev = kv.Value
			case "vcs.modified":
				modified = kv.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" && modified {
			rev += "-dirty"
		}
		s.Commit = rev
	}
	return s
}

var toolStamp = sync.OnceValue(func() buildStamp {
	bi, _ := debug.ReadBuildInfo()
	return stampOf(bi, version, commit)
})

// toolVersion is the version and commit a report records.
func toolVersion() string { return toolStamp().String() }
