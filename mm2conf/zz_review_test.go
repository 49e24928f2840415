package mm2conf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReview(t *testing.T) {
	dir := os.Getenv("REVIEW_DIR")
	if dir == "" {
		t.Skip()
	}
	for _, cc := range corpusCases(t) {
		c, _, tmp := loadCase(t, cc)
		var b strings.Builder
		NewCheckReport(c, ReportOptions{}).RenderText(&b)
		os.WriteFile(filepath.Join(dir, cc.name+".txt"), []byte(normalise(b.String(), tmp)), 0o644)
	}
}
func TestReviewExplain(t *testing.T) {
	dir := os.Getenv("REVIEW_DIR")
	if dir == "" {
		t.Skip()
	}
	for _, cc := range corpusCases(t) {
		c, _, tmp := loadCase(t, cc)
		var b strings.Builder
		r, _ := NewExplainReport(c, ExplainOptions{})
		r.RenderText(&b)
		os.WriteFile(filepath.Join(dir, cc.name+".explain.txt"), []byte(normalise(b.String(), tmp)), 0o644)
	}
}
