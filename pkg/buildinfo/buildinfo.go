// Package buildinfo holds kmm's version and commit, set at link time with
// -ldflags "-X github.com/kmmproject/kmm/pkg/buildinfo.Version=... -X ...Commit=...".
package buildinfo

// Version is the kmm release version.
var Version = "0.1.0-dev"

// Commit is the git commit the binary was built from.
var Commit = "unknown"
