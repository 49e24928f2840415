package cmdutil

import (
	"fmt"

	"github.com/kmmproject/kmm/mm2conf"
	"github.com/kmmproject/kmm/pkg/kerr"
)

// GroupsMatcher compiles a command's --groups regex the way MM2 compiles its group filters;
// nil for an empty regex (no --groups). A bad regex is a usage error.
func GroupsMatcher(re string) (func(string) bool, error) {
	if re == "" {
		return nil, nil
	}
	m, err := mm2conf.CompilePatternList([]string{re})
	if err != nil {
		return nil, kerr.Wrap(kerr.Usage, fmt.Errorf("--groups: %w", err))
	}
	return m, nil
}
