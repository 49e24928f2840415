// Package whoami says who runs this process: the user and host written into kmm's records (the
// flow record's and the journal's "by", a lease's host). It is a leaf: the engine calls it, and
// pkg/app hands it to commands through cmdutil.Factory.Who (tests hand their own).
package whoami

import (
	"os"
	"os/user"
)

// Who returns the user name ("unknown" when it cannot be read) and the host name ("" when it
// cannot be read).
func Who() (name, host string) {
	host, _ = os.Hostname()
	name = "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return name, host
}

// UserAtHost returns "user@host" (see Who).
func UserAtHost() string {
	name, host := Who()
	return name + "@" + host
}
