package configcmd

import (
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// RunCheck and RunExplain validate their options first: a usage error (exit 2) before the file
// is read (the file named here does not exist).
func TestOptionsValidate(t *testing.T) {
	file := mm2conf.LoadOptions{ConfigFile: "/nonexistent/mm2.properties"}
	for _, c := range []struct {
		name string
		run  func(*cmdutil.Factory) error
		want string // "" = valid
	}{
		{"check -o yaml", func(f *cmdutil.Factory) error { return RunCheck(&CheckOptions{File: file, Output: "yaml"}, f) }, "-o must be"},
		{"check without a file", func(f *cmdutil.Factory) error { return RunCheck(&CheckOptions{Output: "table"}, f) }, "no MM2 properties file given"},
		{"explain -o yaml", func(f *cmdutil.Factory) error { return RunExplain(&ExplainOptions{File: file, Output: "yaml"}, f) }, "-o must be"},
		{"explain without a file", func(f *cmdutil.Factory) error { return RunExplain(&ExplainOptions{Output: "json"}, f) }, "no MM2 properties file given"},
		{"explain KEY with --topic", func(f *cmdutil.Factory) error {
			return RunExplain(&ExplainOptions{File: file, Output: "table", Keys: []string{"bootstrap.servers"}, Topics: []string{"orders"}}, f)
		}, "do not go with --topic"},
	} {
		t.Run(c.name, func(t *testing.T) {
			io, _, _, _ := iostreams.Test()
			err := c.run(cmdutil.NewTestFactory(io, nil, time.Now))
			if err == nil || kerr.KindOf(err) != kerr.Usage || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (kind %v), want a usage error with %q", err, kerr.KindOf(err), c.want)
			}
		})
	}
	if err := (&CheckOptions{File: file, Output: "json"}).Validate(); err != nil {
		t.Errorf("valid check options: %v", err)
	}
	if err := (&ExplainOptions{File: file, Output: "table", Topics: []string{"orders"}}).Validate(); err != nil {
		t.Errorf("valid explain options: %v", err)
	}
}
