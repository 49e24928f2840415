package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kmmproject/kmm/scripts/wanlink"
)

// WAN rows (issues 16 and 20): kmm and MM2, each with its default client settings, replicate
// the 1 KB workload with a toxiproxy link (scripts/wanlink) adding latency to each direction
// in front of the source cluster (fetch across the WAN) or of the target (produce across the
// WAN). Every row goes through the link, the 0 ms rows included, so the ratio to 0 ms measures
// the latency alone. A row measures BENCH_WAN_SECONDS from BENCH_WAN_WARMUP_SECONDS (default 5)
// after the first record (or until everything is copied, if sooner; from the first record when
// everything arrived within the warm-up).
//
//	BENCH_ONLY=wan                  only these rows (part of the default list; not in bench-smoke unless asked)
//	BENCH_WAN_LATENCIES=0,25,50,100 one-way latency in ms (round trip: twice that)
//	BENCH_WAN_SIDES=source,target   where the link sits
//	BENCH_WAN_TOOLS=kmm,kmm-wan,mm2 kmm-wan: kmm with the setting docs/replicate.md recommends for long
//	                                round trips (wanTasks pipelines)
//	BENCH_WAN_REPEATS=1             repetitions of the WAN rows (at most BENCH_REPEATS): 24 rows each
//	BENCH_WAN_SECONDS=20            measurement window per row
//	BENCH_WAN_WARMUP_SECONDS=5      excluded after the first record (MM2's JIT, connection set-up)

// kmm's recommended setting for a long round trip (docs/replicate.md, "Long round trips"): more pipelines,
// so more producer connections and fetches in flight per round trip; the memory budget is left
// to its default, which makes kmm size its queues for the link it measures (flow.WANRTT). (An
// explicit 64 MiB budget, recommended before that sizing existed, turns it off: with it kmm WAN
// copied 0.5-0.7x what kmm with defaults did at 25-100 ms, 2026-12-03.)
const wanTasks = 4

type wanRun struct {
	Side     string `json:"side"` // source, target
	OneWayMs int    `json:"one_way_ms"`
	runResult
}

type wanSettings struct {
	latencies []int
	sides     []string
	tools     []string
	window    time.Duration
	warmup    time.Duration
}

func wanConfig(cfg *config) (wanSettings, error) {
	var s wanSettings
	for _, v := range strings.Split(envStr("BENCH_WAN_LATENCIES", "0,25,50,100"), ",") {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return s, fmt.Errorf("BENCH_WAN_LATENCIES: %q is not a latency in ms", v)
		}
		s.latencies = append(s.latencies, n)
	}
	for _, v := range strings.Split(envStr("BENCH_WAN_SIDES", "source,target"), ",") {
		if v = strings.TrimSpace(v); v != "source" && v != "target" {
			return s, fmt.Errorf("BENCH_WAN_SIDES: %q is neither source nor target", v)
		}
		s.sides = append(s.sides, strings.TrimSpace(v))
	}
	for _, v := range strings.Split(envStr("BENCH_WAN_TOOLS", "kmm,kmm-wan,mm2"), ",") {
		if v = strings.TrimSpace(v); v != "kmm" && v != "mm2" && v != "kmm-wan" {
			return s, fmt.Errorf("BENCH_WAN_TOOLS: %q is none of kmm, kmm-wan, mm2", v)
		}
		s.tools = append(s.tools, strings.TrimSpace(v))
	}
	def := 20.0
	if cfg.Smoke {
		def = 3
	}
	s.window = time.Duration(envFloat("BENCH_WAN_SECONDS", def) * float64(time.Second))
	defWarm := 5.0
	if cfg.Smoke {
		defWarm = 1
	}
	s.warmup = time.Duration(envFloat("BENCH_WAN_WARMUP_SECONDS", defWarm) * float64(time.Second))
	return s, nil
}

func envStr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// runWAN measures the WAN rows of repetition rep on workload w.
func runWAN(ctx context.Context, cfg *config, w *workload, rep int, record func(wanRun)) error {
	s, err := wanConfig(cfg)
	if err != nil {
		return err
	}
	order := 0
	for _, side := range s.sides {
		for _, lat := range s.latencies {
			tools := slices.Clone(s.tools)
			if (rep+lat/25)%2 == 0 {
				slices.Reverse(tools)
			}
			for _, tool := range tools {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				cluster := "A"
				if side == "target" {
					cluster, _ = targetOf(cfg, tool)
				}
				link, err := wanlink.Start(cluster, time.Duration(lat)*time.Millisecond)
				if err != nil {
					return err
				}
				o := runOpts{Window: s.window, Warmup: s.warmup, Defaults: true, Name: fmt.Sprintf("-wan-%s-%d", side, lat)}
				if tool == "kmm-wan" {
					o.Tasks = wanTasks
				}
				if side == "source" {
					o.SourceBootstrap = link.Listen
				} else {
					o.TargetBootstrap = link.Listen
				}
				logf("wan %s %s rep %d: link in front of %s (%s), +%d ms each way ...", tool, side, rep, cluster, link.Listen, lat)
				r := runReplicationWith(ctx, cfg, tool, w, rep, order, o)
				link.Close()
				order++
				record(wanRun{Side: side, OneWayMs: lat, runResult: r})
			}
		}
	}
	return nil
}

// wanSummary is one (side, latency) cell: medians per tool and the pairwise ratios.
type wanSummary struct {
	Side      string `json:"side"`
	OneWayMs  int    `json:"one_way_ms"`
	KMM       stat   `json:"kmm_mb_per_s"`
	KMMWAN    stat   `json:"kmm_wan_mb_per_s"` // kmm with its recommended WAN settings
	MM2       stat   `json:"mm2_mb_per_s"`
	KMMvsMM2  ratio  `json:"kmm_vs_mm2"`
	KMMvsZero ratio  `json:"kmm_vs_own_0ms"`
	// KMMWANvsZero: kmm-wan against kmm (defaults) at 0 ms in the same repetition.
	KMMWANvsZero ratio `json:"kmm_wan_vs_kmm_0ms"`
	MM2vsZero    ratio `json:"mm2_vs_own_0ms"`
}

func (rep *report) summarizeWAN() {
	rep.WANSummary = nil
	find := func(tool, side string, lat, i int) (wanRun, bool) {
		for _, r := range rep.WAN {
			if r.Kind == tool && r.Side == side && r.OneWayMs == lat && r.Rep == i && r.OK {
				return r, true
			}
		}
		return wanRun{}, false
	}
	type key struct {
		side string
		lat  int
	}
	var keys []key
	seen := map[key]bool{}
	maxRep := 0
	for _, r := range rep.WAN {
		k := key{r.Side, r.OneWayMs}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		maxRep = max(maxRep, r.Rep)
	}
	for _, k := range keys {
		ws := wanSummary{Side: k.side, OneWayMs: k.lat}
		var km, kw, mm, kvm, kz, kwz, mz []float64
		for i := 1; i <= maxRep; i++ {
			kr, kok := find("kmm", k.side, k.lat, i)
			mr, mok := find("mm2", k.side, k.lat, i)
			if kok {
				km = append(km, kr.MBPerSec)
			}
			if mok {
				mm = append(mm, mr.MBPerSec)
			}
			if kok && mok {
				kvm = append(kvm, div(kr.MBPerSec, mr.MBPerSec))
			}
			if z, ok := find("kmm", k.side, 0, i); ok && kok {
				kz = append(kz, div(kr.MBPerSec, z.MBPerSec))
			}
			if wr, ok := find("kmm-wan", k.side, k.lat, i); ok {
				kw = append(kw, wr.MBPerSec)
				if z, ok := find("kmm", k.side, 0, i); ok {
					kwz = append(kwz, div(wr.MBPerSec, z.MBPerSec))
				}
			}
			if z, ok := find("mm2", k.side, 0, i); ok && mok {
				mz = append(mz, div(mr.MBPerSec, z.MBPerSec))
			}
		}
		if len(km) > 0 {
			ws.KMM = statOf(km)
		}
		if len(mm) > 0 {
			ws.MM2 = statOf(mm)
		}
		if len(kw) > 0 {
			ws.KMMWAN = statOf(kw)
		}
		if len(kwz) > 0 {
			ws.KMMWANvsZero = ratioOf(kwz)
		}
		if len(kvm) > 0 {
			ws.KMMvsMM2 = ratioOf(kvm)
		}
		if len(kz) > 0 {
			ws.KMMvsZero = ratioOf(kz)
		}
		if len(mz) > 0 {
			ws.MM2vsZero = ratioOf(mz)
		}
		rep.WANSummary = append(rep.WANSummary, ws)
	}
}

// wanMarkdown renders the WAN section ("" without WAN rows).
func (rep *report) wanMarkdown() string {
	if len(rep.WANSummary) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Long round trips (WAN profile)\n\n")
	b.WriteString("A toxiproxy link (scripts/wanlink) in front of the source cluster's or the target's PROXIED listener adds the latency to each direction (round trip: twice the one-way figure); the brokers advertise the link's address, so every request crosses it. 1 KB workload, each tool with its default client settings (no high-volume tuning), `tasks.max` as above; throughput over a window (BENCH_WAN_SECONDS) that starts BENCH_WAN_WARMUP_SECONDS after the first record. Ratios are taken pair by pair within one repetition; the 0 ms rows go through the link too.\n\n")
	fmt.Fprintf(&b, "*kmm WAN* is kmm with the setting docs/replicate.md recommends for long round trips: `tasks.max = %d` (the memory budget left to its default, so kmm sizes its queues for the link it measures); its ratio is to kmm with defaults at 0 ms.\n\n", wanTasks)
	b.WriteString("| link in front of | one-way latency | kmm MB/s | kmm WAN MB/s | MM2 MB/s | kmm / MM2 | kmm / kmm at 0 ms | kmm WAN / kmm at 0 ms | MM2 / MM2 at 0 ms |\n|---|---|---|---|---|---|---|---|---|\n")
	f := func(s stat) string {
		if s.N == 0 {
			return "–"
		}
		return fmt.Sprintf("%s <sub>(%s–%s)</sub>", num(s.Median), num(s.Min), num(s.Max))
	}
	r := func(x ratio) string {
		if len(x.Pairs) == 0 {
			return "–"
		}
		return fmt.Sprintf("**%.2f**", x.Median)
	}
	for _, s := range rep.WANSummary {
		fmt.Fprintf(&b, "| %s | %d ms | %s | %s | %s | %s | %s | %s | %s |\n", s.Side, s.OneWayMs, f(s.KMM), f(s.KMMWAN), f(s.MM2), r(s.KMMvsMM2), r(s.KMMvsZero), r(s.KMMWANvsZero), r(s.MM2vsZero))
	}
	b.WriteString("\n| WAN run | side | one-way ms | rep | MB/s | records | window s | start-up s | CPU-s/GB | peak RSS MiB | other cores | ok |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range rep.WAN {
		ok := "yes"
		if !w.OK {
			ok = "no: " + firstLine(w.Error)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %d | %s | %s | %s | %.0f | %s | %s |\n", w.Kind, w.Side, w.OneWayMs, w.Rep, num(w.MBPerSec), w.Records,
			num(w.TransferSec), num(w.StartupSec), num(w.CPUPerGB), w.PeakRSSMB, num(w.OtherCores), ok)
	}
	b.WriteString("\n")
	return b.String()
}
