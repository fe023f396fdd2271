#!/usr/bin/env bash
# One networked game of the demo scenario on loopback: `phalanx host` and four `phalanx join --bot`
# processes (the skirmish AI on every seat), each under `/usr/bin/time -v`. Prints each program's
# summary lines (traffic, order latency, final hash) and the host's CPU time and peak memory.
# Usage, from anywhere: session/benches/net_game.sh [DELAY auto|TURNS] [TURNS] [TURN_MS]
# after `cargo build --release -p phalanx-cli`. BENCHMARKS.md, "Networked sessions".
set -euo pipefail
cd "$(dirname "$0")/../.."
DELAY=${1:-auto}; TURNS=${2:-150}; TURN_MS=${3:-200}
BIN=./target/release/phalanx
[ -x "$BIN" ] || { echo "net_game.sh: $BIN is missing; run cargo build --release -p phalanx-cli first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "net_game.sh: /usr/bin/time is missing (Debian package: time)" >&2; exit 2; }
D=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$D"' EXIT
for s in 1 2 3 4; do printf '%032x\n' $((s * 7919)); done > "$D/tok"
/usr/bin/time -v "$BIN" host phalanx/demo.json --listen 127.0.0.1:0 --players 4 --turns "$TURNS" \
  --turn-ms "$TURN_MS" --delay "$DELAY" --token-file "$D/tok" > "$D/host.txt" 2> "$D/host.time" &
for _ in $(seq 100); do [ -s "$D/host.txt" ] && break; sleep 0.1; done
ADDR=$(head -1 "$D/host.txt" | sed 's/listening on //')
for s in 1 2 3 4; do
  /usr/bin/time -v "$BIN" join "$ADDR" --seat "$s" --token "$(sed -n "${s}p" "$D/tok")" --bot > "$D/c$s.txt" 2> "$D/c$s.time" &
done
wait
echo "== delay $DELAY, $TURNS turns of $TURN_MS ms"
echo "host:"
grep -E "^traffic|final hash" "$D/host.txt" | tail -2
grep -E "Elapsed|User time|System time|Maximum resident" "$D/host.time"
for s in 1 2 3 4; do
  echo "seat $s:"
  grep -E "^traffic|^order latency" "$D/c$s.txt"
  grep -E "Maximum resident" "$D/c$s.time"
done
echo "final hashes (count, hash):"
grep -h "^turns .* final hash" "$D/host.txt" "$D"/c?.txt | awk '{print $NF}' | sort | uniq -c
