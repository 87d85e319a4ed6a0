#!/usr/bin/env bash
# fault.sh — a rank dies mid-run. In a 3-rank training job with a
# checkpoint every epoch, SIGKILL rank 1 once two epochs are done: the whole
# job must end within 10 s with a message naming the dead rank, and --resume
# from the last checkpoint must finish with exactly the weights of an
# uninterrupted run. Rank 1 is held (internal/testhold) right after epoch 2's
# checkpoint while the others wait for it in the next epoch, so the kill
# lands there on a fast machine and on a slow one alike.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

[[ -x "$mpignn" ]] || fail "$mpignn is missing (make build)"
tmp="$(mktemp -d /tmp/mpignn-fault.XXXXXX)"
job=""
cleanup() {
	[[ -n "$job" ]] && kill -9 -- "-$job" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
cd "$repo"

"$mpignn" gen --nodes 3000 --avg-degree 10 --classes 8 --feat-dim 32 --seed 5 --out "$tmp/data" >/dev/null ||
	fail "gen"
split="$(ls "$tmp/data/split")"
"$mpignn" partition --data "$tmp/data" --split "$split" --parts 3 --out "$tmp/parts" >/dev/null || fail "partition"
epochs=4
train=("$mpignn" train --parts "$tmp/parts" --epochs "$epochs" --batch 16 --fanout 10,10 --seed 11
	--checkpoint-every 1 --quiet)

./mpirun.sh -n 3 "${train[@]}" --checkpoint "$tmp/ck-a" --metrics "$tmp/a.jsonl" >"$tmp/a.log" 2>&1 ||
	fail "uninterrupted run: $(tail -20 "$tmp/a.log")"
wa="$(weights "$tmp/a.log")"
[[ -n "$wa" ]] || fail "no weights digest in $(cat "$tmp/a.log")"

# setsid: the job gets its own process group, which cleanup can kill.
hold="$tmp/hold"
mkdir "$hold"
MPIGNN_TEST_HOLD="train-epoch:2@1" MPIGNN_TEST_HOLD_DIR="$hold" \
	setsid ./mpirun.sh -n 3 "${train[@]}" --checkpoint "$tmp/ck-b" --metrics "$tmp/b.jsonl" >"$tmp/b.log" 2>&1 &
job=$!
# The hold file appears once rank 1 has finished epoch 2 and stopped; it
# holds the rank's PID. No deadline but the job's own end: a slow machine
# only takes longer to get there.
while [[ ! -s "$hold/train-epoch:2@1" ]]; do
	kill -0 "$job" 2>/dev/null || fail "the job ended before rank 1 finished epoch 2: $(tail -20 "$tmp/b.log")"
	sleep 0.05
done
victim="$(cat "$hold/train-epoch:2@1")"
done_epochs=$(grep -c '"epoch"' "$tmp/b.jsonl")
((done_epochs == 2)) || fail "the metrics file has $done_epochs epochs at the hold after epoch 2"
say "killing rank 1 (process $victim) with SIGKILL after $done_epochs of $epochs epochs"
start=$(date +%s%N)
kill -9 "$victim"
for _ in $(seq 150); do
	kill -0 "$job" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$job" 2>/dev/null; then
	fail "the job is still running 15 s after a rank died: $(tail -20 "$tmp/b.log")"
fi
rc=0
wait "$job" || rc=$?
job=""
ms=$((($(date +%s%N) - start) / 1000000))
took="$((ms / 1000)).$(printf %03d $((ms % 1000)))"
say "job ended after ${took}s with exit code $rc; its last lines:"
tail -8 "$tmp/b.log" | sed 's/^/    /'
((ms <= 10000)) || fail "the job took ${took}s to end (limit 10 s)"
[[ $rc -ne 0 ]] || fail "the job exited 0 although a rank was killed"
grep -Eqi 'killed|signal 9|exited on signal' "$tmp/b.log" || fail "no message about the dead rank"

./mpirun.sh -n 3 "${train[@]}" --checkpoint "$tmp/ck-b" --metrics "$tmp/b.jsonl" --resume >"$tmp/b2.log" 2>&1 ||
	fail "resume: $(tail -20 "$tmp/b2.log")"
grep -i 'resum' "$tmp/b2.log" | head -2 | sed 's/^/    /'
wb="$(weights "$tmp/b2.log")"
[[ "$wa" == "$wb" ]] || fail "resumed weights $wb differ from the uninterrupted run's $wa"
say "PASS: job ended ${took}s after SIGKILL; resumed run ends with $wb like the uninterrupted one"
