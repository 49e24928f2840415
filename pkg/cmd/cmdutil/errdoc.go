package cmdutil

import (
	"strings"
	"time"

	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
)

// NewErrorDoc is the JSON error document (output.ErrorDoc) of err ending command ("kmm
// verify") with exitCode.
func NewErrorDoc(command string, exitCode int, err error, now time.Time) output.ErrorDoc {
	d := output.ErrorDoc{SchemaVersion: output.SchemaVersion, Kind: "error", GeneratedAt: now.UTC(), Command: command, ExitCode: exitCode,
		Class: strings.ReplaceAll(kerr.KindOf(err).String(), " ", "_")}
	if exitCode == 130 {
		d.Class = kerr.Interrupted.String()
	}
	if err != nil {
		d.Cause = err.Error()
	}
	if h := kerr.HintOf(err); h != "" {
		d.Hint = &h
	}
	return d
}

// ErrorDoc is NewErrorDoc with the factory's exit codes and clock.
func (f *Factory) ErrorDoc(command string, err error) output.ErrorDoc {
	code := 1
	if f.ExitCode != nil {
		code = f.ExitCode(err)
	}
	return NewErrorDoc(command, code, err, f.Now())
}
