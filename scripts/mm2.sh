#!/usr/bin/env bash
# Runs Apache MirrorMaker 2 (dedicated mode, org.apache.kafka.connect.mirror.MirrorMaker) from the
# test bed's Maven jars, for interop tests and benchmarks.
#
#   scripts/mm2.sh start NAME mm2.properties [--clusters B ...]   start in the background
#   scripts/mm2.sh stop NAME                                      stop (SIGTERM, then SIGKILL after 30 s)
#   scripts/mm2.sh logs NAME [N]                                  last N lines of its log
#
# Environment: KMM_TESTBED_DIR (default <repo>/.testbed), MM2_HEAP (default -Xms128m -Xmx512m).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BED="${KMM_TESTBED_DIR:-$ROOT/.testbed}"
CP="$("$ROOT/scripts/testbed.sh" classpath)"
HEAP="${MM2_HEAP:--Xms128m -Xmx512m}"

cmd="${1:-}"; name="${2:-}"
[[ -n "$cmd" && -n "$name" ]] || { sed -n '2,10p' "$0" >&2; exit 2; }
dir="$BED/mm2/$name"
case "$cmd" in
  start)
    file="${3:?properties file}"; shift 3
    mkdir -p "$dir"
    if [[ -f "$dir/pid" ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then echo "mm2 $name already running" >&2; exit 1; fi
    cat > "$dir/log4j2.properties" <<'PROPS'
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
PROPS
    # shellcheck disable=SC2086
    nohup java $HEAP -XX:+UseG1GC -Djava.awt.headless=true -Dlog4j2.configurationFile="$dir/log4j2.properties" \
      -cp "$CP" org.apache.kafka.connect.mirror.MirrorMaker "$file" "$@" >>"$dir/mm2.log" 2>&1 </dev/null &
    echo $! > "$dir/pid"
    echo "mm2 $name started (pid $!, log $dir/mm2.log)" >&2
    ;;
  stop)
    [[ -f "$dir/pid" ]] || exit 0
    pid="$(cat "$dir/pid")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
    rm -f "$dir/pid"
    echo "mm2 $name stopped (pid $pid)" >&2
    ;;
  logs) tail -n "${3:-80}" "$dir/mm2.log" ;;
  *) sed -n '2,10p' "$0" >&2; exit 2 ;;
esac
