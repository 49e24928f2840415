package main

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var (
	colCeiling = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	colKMM     = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	colMM2     = color.RGBA{R: 255, G: 127, B: 14, A: 255}
)

// groupedBars adds one bar series per name, len(values[i]) groups each.
func groupedBars(p *plot.Plot, names []string, cols []color.Color, values [][]float64) error {
	w := vg.Points(18)
	n := float64(len(names))
	for i, name := range names {
		b, err := plotter.NewBarChart(plotter.Values(values[i]), w)
		if err != nil {
			return err
		}
		b.Color = cols[i]
		b.LineStyle.Width = 0
		b.Offset = vg.Length((float64(i) - (n-1)/2)) * w
		p.Add(b)
		p.Legend.Add(name, b)
		// value labels above the bars
		var xys plotter.XYLabels
		for g, v := range values[i] {
			if v == 0 {
				continue // not measured
			}
			xys.XYs = append(xys.XYs, plotter.XY{X: float64(g), Y: v})
			xys.Labels = append(xys.Labels, shortNum(v))
		}
		if len(xys.XYs) == 0 {
			continue
		}
		l, err := plotter.NewLabels(xys)
		if err != nil {
			return err
		}
		for j := range l.TextStyle {
			l.TextStyle[j].XAlign = draw.XCenter
			l.TextStyle[j].Font.Size = vg.Points(7)
		}
		l.Offset = vg.Point{X: b.Offset, Y: vg.Points(2)}
		p.Add(l)
	}
	p.Legend.Top = true
	p.Legend.Left = false
	return nil
}

func shortNum(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func median(ms map[string]map[string]stat, kind, metric string) float64 {
	return ms[kind][metric].Median
}

// drawChart writes throughput (records/s and MB/s per workload: ceiling, kmm, MM2) and latency
// percentiles (kmm, MM2) as one PNG.
func drawChart(rep *report, path string) error {
	var groups []string
	vals := [][]float64{{}, {}, {}}
	mb := [][]float64{{}, {}, {}}
	for _, ws := range rep.Summary.Workloads {
		groups = append(groups, workloadTitle[ws.Workload])
		vals[0] = append(vals[0], ws.Ceiling.Median)
		vals[1] = append(vals[1], median(ws.Metrics, "kmm", "records_per_s"))
		vals[2] = append(vals[2], median(ws.Metrics, "mm2", "records_per_s"))
		cm := min(median(ws.Metrics, "ceiling-consume", "mb_per_s"), median(ws.Metrics, "ceiling-produce", "mb_per_s"))
		mb[0] = append(mb[0], cm)
		mb[1] = append(mb[1], median(ws.Metrics, "kmm", "mb_per_s"))
		mb[2] = append(mb[2], median(ws.Metrics, "mm2", "mb_per_s"))
	}
	if len(groups) == 0 { // no bulk rows (BENCH_ONLY=partitions loads no workload): empty plots
		groups = []string{"no bulk rows"}
		for i := range vals {
			vals[i], mb[i] = []float64{0}, []float64{0}
		}
	}
	names := []string{"ceiling", "kmm", "MM2"}
	cols := []color.Color{colCeiling, colKMM, colMM2}

	p1 := plot.New()
	p1.Title.Text = "Replication throughput (records/s, median)"
	p1.Y.Label.Text = "records/s"
	if err := groupedBars(p1, names, cols, vals); err != nil {
		return err
	}
	p1.NominalX(groups...)
	p1.Y.Min = 0
	p1.Y.Max *= 1.15

	p2 := plot.New()
	p2.Title.Text = "Replication throughput (payload MB/s, median)"
	p2.Y.Label.Text = "MB/s"
	if err := groupedBars(p2, names, cols, mb); err != nil {
		return err
	}
	p2.NominalX(groups...)
	p2.Y.Min = 0
	p2.Y.Max *= 1.15

	p3 := plot.New()
	p3.Title.Text = fmt.Sprintf("End-to-end latency at %d rec/s (median of runs)", rep.Config.LatencyRate)
	p3.Y.Label.Text = "milliseconds"
	pcts := []string{"p50_ms", "p90_ms", "p99_ms", "max_ms"}
	lat := [][]float64{{}, {}}
	for _, m := range pcts {
		lat[0] = append(lat[0], rep.Summary.Latency["kmm"][m].Median)
		lat[1] = append(lat[1], rep.Summary.Latency["mm2"][m].Median)
	}
	if err := groupedBars(p3, []string{"kmm", "MM2"}, []color.Color{colKMM, colMM2}, lat); err != nil {
		return err
	}
	p3.NominalX("p50", "p90", "p99", "max")
	p3.Y.Min = 0
	p3.Y.Max *= 1.15

	img := vgimg.New(vg.Points(1500), vg.Points(460))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 3, PadX: vg.Points(20), PadY: vg.Points(10), PadTop: vg.Points(10), PadBottom: vg.Points(10), PadLeft: vg.Points(10), PadRight: vg.Points(10)}
	cs := plot.Align([][]*plot.Plot{{p1, p2, p3}}, tiles, dc)
	p1.Draw(cs[0][0])
	p2.Draw(cs[0][1])
	p3.Draw(cs[0][2])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = vgimg.PngCanvas{Canvas: img}.WriteTo(f)
	return err
}
