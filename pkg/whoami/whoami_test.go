package whoami

import (
	"os"
	"strings"
	"testing"
)

func TestUserAtHost(t *testing.T) {
	name, host := Who()
	if name == "" {
		t.Fatal("empty user name")
	}
	if want, _ := os.Hostname(); host != want {
		t.Fatalf("host %q, want %q", host, want)
	}
	if got := UserAtHost(); got != name+"@"+host || !strings.Contains(got, "@") {
		t.Fatalf("UserAtHost() = %q", got)
	}
}
