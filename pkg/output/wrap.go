package output

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Wrap fits one line of text into width columns: words are moved to new lines that start with
// indent; a word longer than a line is cut, after a '.', ',', '/', ':', '-', '_', '=' or ';'
// where it has one (keys, host lists, paths), else where the line ends. Newlines in s start new
// lines (also indented). width <= 0 leaves s as it is.
func Wrap(s string, width int, indent string) string { return Hang("", s, width, indent) }

// Hang is Wrap with lead written before s's first line as it is (a label, a flag's name and
// its padding): the first line holds what fits after lead, the others start with indent.
func Hang(lead, s string, width int, indent string) string {
	if width <= 0 {
		return lead + s
	}
	var out []string
	for i, para := range strings.Split(s, "\n") {
		if i > 0 {
			lead = indent
		}
		out = append(out, wrapLine(para, width, lead, indent)...)
	}
	return strings.Join(out, "\n")
}

// wrapLine wraps one line whose first output line starts with lead (already part of the
// width) and whose later lines start with indent.
func wrapLine(s string, width int, lead, indent string) []string {
	if utf8.RuneCountInString(lead+s) <= width {
		return []string{lead + s}
	}
	// Keep the line's own leading blanks on its first line.
	trimmed := strings.TrimLeft(s, " ")
	cur := lead + s[:len(s)-len(trimmed)]
	curLen := utf8.RuneCountInString(cur)
	startLen := curLen
	indentLen := utf8.RuneCountInString(indent)
	if indentLen >= width {
		indent, indentLen = "", 0
	}
	var lines []string
	flush := func() {
		lines = append(lines, strings.TrimRight(cur, " "))
		cur, curLen, startLen = indent, indentLen, indentLen
	}
	for _, word := range strings.Fields(trimmed) {
		n := utf8.RuneCountInString(word)
		sep := 1
		if curLen == startLen {
			sep = 0
		}
		if curLen+sep+n <= width {
			if sep == 1 {
				cur += " "
			}
			cur += word
			curLen += sep + n
			continue
		}
		if curLen > startLen {
			flush()
		}
		// A word longer than the room left on a fresh line is cut.
		for r := []rune(word); len(r) > 0; {
			room := max(width-curLen, 1)
			if len(r) <= room {
				cur += string(r)
				curLen += len(r)
				break
			}
			cut := cutAt(r, room)
			cur += string(r[:cut])
			curLen += cut
			r = r[cut:]
			flush()
		}
	}
	if curLen > startLen || len(lines) == 0 {
		lines = append(lines, strings.TrimRight(cur, " "))
	}
	return lines
}

// cutAt is where to cut r to fit room runes: after the last punctuation that leaves more than
// a third of the room used, else at room.
func cutAt(r []rune, room int) int {
	for i := room - 1; i >= room/3 && i > 0; i-- {
		if strings.ContainsRune(".,/:-_=;", r[i]) {
			return i + 1
		}
	}
	return room
}

// A table narrowed to a width keeps its last column (usually prose) at lastColumn and the
// others at column (config explain's "(207 chars, --wide shows all)" fits), all at least as
// wide as their headers, before it narrows any further, down to minColumn.
const (
	lastColumn = 40
	column     = 30
	minColumn  = 12
)

// columnGap is what Table puts between two columns.
const columnGap = 2

// TableWidth is Table fitted into width columns: when the table is wider, its columns but the
// first (which names the rows) are narrowed from the last one leftwards, down to 40 columns for
// the last (usually prose) and 30 for the others; if that is not enough, the widest column is
// narrowed in turn, the first included, none below 12 or its header. Cells wrap within their
// column (see Wrap), each row taking as many lines as its tallest cell. A table that cannot be
// narrowed enough stays wider. width <= 0 is Table.
func TableWidth(w io.Writer, header []string, rows [][]string, width int) error {
	if width <= 0 || len(header) == 0 {
		return Table(w, header, rows)
	}
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i := range min(len(r), len(widths)) {
			for _, l := range strings.Split(r[i], "\n") {
				widths[i] = max(widths[i], utf8.RuneCountInString(l))
			}
		}
	}
	over := columnGap*(len(widths)-1) - width
	for _, n := range widths {
		over += n
	}
	for i := len(widths) - 1; i > 0 && over > 0; i-- {
		floor := column
		if i == len(widths)-1 {
			floor = lastColumn
		}
		cut := min(over, max(widths[i]-max(floor, utf8.RuneCountInString(header[i])), 0))
		widths[i] -= cut
		over -= cut
	}
	for over > 0 {
		widest := -1
		for i, n := range widths {
			if n > max(minColumn, utf8.RuneCountInString(header[i])) && (widest < 0 || n > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		widths[widest]--
		over--
	}
	wrapped := make([][]string, len(rows))
	for ri, r := range rows {
		wrapped[ri] = make([]string, len(r))
		for i, cell := range r {
			if i < len(widths) {
				cell = Wrap(cell, widths[i], "")
			}
			wrapped[ri][i] = cell
		}
	}
	return Table(w, header, wrapped)
}
