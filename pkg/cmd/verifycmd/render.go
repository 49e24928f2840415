package verifycmd

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"

	"github.com/kmmproject/kmm/pkg/cmd/cmdutil"
	"github.com/kmmproject/kmm/pkg/iostreams"
	"github.com/kmmproject/kmm/pkg/kerr"
	"github.com/kmmproject/kmm/pkg/output"
	"github.com/kmmproject/kmm/pkg/verify"
)

func where(f verify.Finding) string {
	var parts []string
	if f.Topic != "" {
		t := f.Topic
		if f.Partition != nil {
			t = fmt.Sprintf("%s[%d]", t, *f.Partition)
		}
		parts = append(parts, t)
	}
	if f.Group != "" {
		parts = append(parts, "group "+f.Group)
	}
	return strings.Join(parts, " ")
}

// renderTable prints one block per flow: per check its WARN and FAIL findings one per row, and
// its OK findings folded into one row.
func renderTable(w io.Writer, reports []*verify.Report, colour bool) error {
	paint := func(s verify.Status) string {
		c := map[verify.Status]*color.Color{verify.OK: color.New(color.FgGreen), verify.Warn: color.New(color.FgYellow), verify.Fail: color.New(color.FgRed, color.Bold)}[s]
		if !colour || c == nil {
			return string(s)
		}
		c.EnableColor()
		return c.Sprint(string(s))
	}
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "flow %s, level %s: %d OK, %d WARN, %d FAIL\n", r.Flow, r.Level, r.Summary.OK, r.Summary.Warn, r.Summary.Fail)
		var rows [][]string
		for _, check := range verify.CheckOrder {
			var oks []verify.Finding
			for _, f := range r.Findings {
				if f.Check != check {
					continue
				}
				if f.Status == verify.OK {
					oks = append(oks, f)
					continue
				}
				rows = append(rows, []string{check, paint(f.Status), where(f), f.Reason})
			}
			switch {
			case len(oks) == 1:
				rows = append(rows, []string{check, paint(verify.OK), where(oks[0]), oks[0].Reason})
			case len(oks) > 1:
				reason := oks[0].Reason
				for _, o := range oks[1:] {
					if o.Reason != reason {
						reason = fmt.Sprintf("%d findings OK, e.g. %s: %s (-o json lists each)", len(oks), where(oks[0]), oks[0].Reason)
						break
					}
				}
				rows = append(rows, []string{check, paint(verify.OK), fmt.Sprintf("all %d", len(oks)), reason})
			}
		}
		if err := output.Table(w, []string{"CHECK", "STATUS", "WHERE", "REASON"}, rows); err != nil {
			return err
		}
	}
	return nil
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes one test suite per flow and one test case per finding (check and
// partition, group or topic); failures carry the reason, warnings are in system-out.
func writeJUnit(path string, reports []*verify.Report) error {
	doc := junitSuites{Name: "kmm verify"}
	for _, r := range reports {
		s := junitSuite{Name: "kmm verify " + r.Flow + " (" + r.Level + ")", Time: fmt.Sprintf("%.3f", r.FinishedAt.Sub(r.StartedAt).Seconds()),
			Timestamp: r.StartedAt.Format(time.RFC3339)}
		for _, f := range r.Findings {
			name := where(f)
			if name == "" {
				name = r.Flow
			}
			c := junitCase{Name: name, Classname: "kmm.verify." + f.Check}
			switch f.Status {
			case verify.Fail:
				c.Failure = &junitFailure{Message: f.Reason, Type: f.Check, Text: f.Reason}
				s.Failures++
			case verify.Warn:
				c.SystemOut = "WARN: " + f.Reason
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		doc.Suites = append(doc.Suites, s)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
	}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

// writeJUnitError writes the JUnit file of a run that failed before it had findings: one suite,
// one failing test case named after the failure's class, its message the cause (the hint in the
// text).
func writeJUnitError(path string, err error, now time.Time) error {
	class := strings.ReplaceAll(kerr.KindOf(err).String(), " ", "_")
	text := err.Error()
	if h := kerr.HintOf(err); h != "" {
		text += "\nhint: " + h
	}
	doc := junitSuites{Name: "kmm verify", Tests: 1, Failures: 1, Suites: []junitSuite{{
		Name: "kmm verify", Tests: 1, Failures: 1, Time: "0.000", Timestamp: now.UTC().Format(time.RFC3339),
		Cases: []junitCase{{Name: "kmm verify did not run its checks (" + class + ")", Classname: "kmm.verify.error",
			Failure: &junitFailure{Message: err.Error(), Type: class, Text: text}}},
	}}}
	b, xerr := xml.MarshalIndent(doc, "", "  ")
	if xerr != nil {
		return xerr
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

// scanProgress reports verify's scans through the one progress helper of pkg/iostreams (a bar
// from schollz/progressbar on a terminal, plain lines on stderr otherwise): one Progress per
// scan, started by verify.Progress's Start.
type scanProgress struct {
	mu  sync.Mutex
	io  *iostreams.IOStreams
	cur *iostreams.Progress
}

func newProgress(f *cmdutil.Factory) *scanProgress { return &scanProgress{io: f.IO} }

func (p *scanProgress) Start(what string, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		p.cur.Done()
	}
	p.cur = p.io.NewProgress(what, total, nil)
}

func (p *scanProgress) Add(n int64) {
	p.mu.Lock()
	cur := p.cur
	p.mu.Unlock()
	if cur != nil {
		cur.Add(n)
	}
}

func (p *scanProgress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		p.cur.Done()
		p.cur = nil
	}
}
