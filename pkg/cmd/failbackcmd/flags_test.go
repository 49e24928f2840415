package failbackcmd

import (
	"strings"
	"testing"
	"time"

	"github.com/kmmproject/kmm/pkg/cmd/drshared"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// The fence flags: acl needs valid principals, principals need acl, a command needs hook; every
// mistake is a usage error (exit 2) before anything is read.
func TestCheckFlagsFence(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string // "" = accepted
	}{
		{Options{Stranded: "quarantine", Common: drshared.Common{Fence: "acl", FencePrincipals: []string{"User:alice"}}}, ""},
		{Options{Stranded: "skip", Common: drshared.Common{Fence: "acl", FencePrincipals: []string{"User:*", "User:bob"}}}, ""},
		{Options{Stranded: "deliver", Common: drshared.Common{Fence: "none"}}, ""},
		{Options{Stranded: "quarantine", Common: drshared.Common{Fence: "acl"}}, "needs at least one --fence-principal"},
		{Options{Stranded: "quarantine", Common: drshared.Common{Fence: "acl", FencePrincipals: []string{"alice"}}}, "is not TYPE:NAME"},
		{Options{Stranded: "quarantine", Common: drshared.Common{Fence: "none", FencePrincipals: []string{"User:alice"}}}, "--fence-principal needs --fence acl"},
		{Options{Stranded: "quarantine", Common: drshared.Common{Fence: "acl", FencePrincipals: []string{"User:alice"}, FenceCommand: "true"}}, "--fence-command needs --fence hook"},
		{Options{Stranded: "quarantine", Common: drshared.Common{Fence: "hook"}}, "needs --fence-command"},
		{Options{Stranded: "later", Common: drshared.Common{Fence: "none"}}, `--stranded "later": unknown`},
	} {
		c.o.Timeout = time.Minute
		err := c.o.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.o, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || kerr.KindOf(err) != kerr.Usage):
			t.Errorf("%+v: %v, want a usage error with %q", c.o, err, c.want)
		}
	}
}
