package httpapi

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The status page's files are embedded in the binary: the page loads nothing from elsewhere
// (no CDN, no web fonts), so it works on a closed network and through an SSH tunnel.
//
//go:embed web/status.html web/status.css web/status.js
var web embed.FS

var pageTmpl = template.Must(template.New("status").Funcs(template.FuncMap{
	"num":     fmtNum,
	"val":     fmtVal,
	"rate":    fmtRate,
	"bytes":   func(n int64) string { return fmtBytes(float64(n)) },
	"bytesf":  fmtBytesPtr,
	"secs":    fmtSecsPtr,
	"secsv":   fmtSecs,
	"ms":      func(p *float64) string { return strconv.FormatFloat(*p, 'f', 1, 64) + " ms" },
	"clock":   fmtClock,
	"rangeof": fmtRange,
	"deref":   func(p *bool) bool { return p != nil && *p },
	"lower":   strings.ToLower,
	"upper":   strings.ToUpper,
	"dash":    func(s string) string { return strings.ReplaceAll(s, " ", "-") },
	"join":    strings.Join,
	"possrc":  positionSourceText,
}).ParseFS(web, "web/status.html"))

// staticFiles are served under /static/.
var staticFiles = map[string]string{"status.css": "text/css; charset=utf-8", "status.js": "text/javascript; charset=utf-8"}

// pageHeaders: nothing but this server's own files, no framing, no referrer.
func pageHeaders(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
}

// wantsHTML: a browser asks for text/html; curl and Connect clients (*/* or JSON) get GET /'s
// JSON, as from Kafka Connect's root resource.
func wantsHTML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(mt), "text/html") {
			return true
		}
	}
	return false
}

// GET / in a browser: the status page; GET /?fragment=1: its live part (what the page's
// script fetches every refresh).
func (s *Server) handlePage(w http.ResponseWriter, r *http.Request, fragment bool) {
	doc := s.report()
	name := "page"
	if fragment {
		name = "live"
	}
	var buf bytes.Buffer
	if err := pageTmpl.ExecuteTemplate(&buf, name, doc); err != nil {
		http.Error(w, "rendering the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	pageHeaders(w, "text/html; charset=utf-8")
	w.Header().Set("Vary", "Accept")
	_, _ = w.Write(buf.Bytes())
}

// GET /api/status: the page's content as JSON.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, s.report())
}

// GET /static/{file}
func (s *Server) handleStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ct, ok := staticFiles[name]
	if !ok {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
		return
	}
	b, err := web.ReadFile("web/" + name)
	if err != nil {
		writeError(w, http.StatusNotFound, "HTTP 404 Not Found")
		return
	}
	pageHeaders(w, ct)
	_, _ = w.Write(b)
}

// fmtNum writes an integer with thousands separators; nil is "?" (unknown, never 0).
func fmtNum(v any) string {
	var n int64
	switch x := v.(type) {
	case nil:
		return "?"
	case *int64:
		if x == nil {
			return "?"
		}
		n = *x
	case int64:
		n = x
	case *int:
		if x == nil {
			return "?"
		}
		n = int64(*x)
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	default:
		return fmt.Sprint(v)
	}
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtVal is a number as a data-value attribute: plain digits, "" when unknown.
func fmtVal(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10)
}

func fmtRange(lo, hi *int64) string {
	if hi == nil {
		return "?"
	}
	if lo == nil || *lo >= *hi {
		return fmtNum(hi)
	}
	return fmtNum(lo) + ".." + fmtNum(hi)
}

func fmtRate(p *float64) string {
	if p == nil {
		return "?"
	}
	v := *p
	if v >= 100 {
		return fmtNum(int64(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func fmtBytesPtr(p *float64) string {
	if p == nil {
		return "?"
	}
	return fmtBytes(*p)
}

// fmtBytes writes a byte count with a decimal unit (as kmm's command line does).
func fmtBytes(v float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB"}
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64) + " B"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[i]
}

func fmtSecsPtr(p *float64) string {
	if p == nil {
		return "?"
	}
	return fmtSecs(*p)
}

// fmtSecs writes a duration for people: 0.4 s, 12 s, 3 min 20 s, 2 h 5 min.
func fmtSecs(s float64) string {
	switch {
	case s < 10:
		return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + " s"
	case s < 120:
		return strconv.FormatFloat(math.Round(s), 'f', 0, 64) + " s"
	case s < 7200:
		m := int(s) / 60
		return fmt.Sprintf("%d min %d s", m, int(s)-60*m)
	case s < 2*86400:
		h := int(s) / 3600
		return fmt.Sprintf("%d h %d min", h, (int(s)-3600*h)/60)
	}
	return fmt.Sprintf("%.1f days", s/86400)
}

// fmtClock writes a time as UTC hh:mm:ss (with the date when it is not today's).
func fmtClock(v any) string {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case *time.Time:
		if x == nil {
			return "?"
		}
		t = *x
	default:
		return "?"
	}
	if t.IsZero() {
		return "?"
	}
	t = t.UTC()
	if y, m, d := time.Now().UTC().Date(); t.Year() != y || t.Month() != m || t.Day() != d {
		return t.Format("2006-01-02 15:04:05Z")
	}
	return t.Format("15:04:05Z")
}
