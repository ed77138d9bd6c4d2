#!/bin/sh
# Idle CPU over 60 s of a program in tmux (80x24): utime+stime from /proc/PID/stat and
# context switches summed over its threads, before and after. 1) mnemo tui --remote on a
# mnemo serve of a new 300-record store; 2) a static Bubble Tea v2 program (bench/teaidle),
# the framework's floor. Build both first:
#   go build -o /tmp/mnemo . && go build -o /tmp/teaidle ./bench/teaidle
# and run it alone: flock /tmp/mnemo-heavy.lock sh bench/idle-tui.sh
set -e
BIN=${MNEMO_BIN:-/tmp/mnemo}
FLOOR=${TEAIDLE_BIN:-/tmp/teaidle}
D=$(mktemp -d /tmp/idle-store.XXXX)
i=0; : > $D/in.jsonl
while [ $i -lt 300 ]; do
  echo "{\"type\":\"document\",\"body\":{\"text\":\"idle note $i about release $((i % 7)) and cache\"},\"meta\":{\"namespace\":\"team:acme\",\"source\":{\"kind\":\"agent\"}}}" >> $D/in.jsonl
  i=$((i+1))
done
$BIN --db $D/store import $D/in.jsonl > /dev/null
PORT=$((20000 + $$ % 20000))
$BIN --db $D/store serve --http 127.0.0.1:$PORT > $D/serve.log 2>&1 &
SRV=$!
sleep 2
TOKEN=$(cat $D/store/serve.token)
snap() {
  st=$(cut -d' ' -f14,15 /proc/$1/stat)
  v=0; n=0
  for f in /proc/$1/task/*/status; do
    v=$((v + $(awk '/^voluntary_ctxt_switches/{print $2}' $f)))
    n=$((n + $(awk '/^nonvoluntary_ctxt_switches/{print $2}' $f)))
  done
  echo "$st $v $n"
}
measure() { # name, command
  tmux new-session -d -s idle-tui-$$ -x 80 -y 24 "$2"
  sleep 5
  PID=$(tmux display -p -t idle-tui-$$ '#{pane_pid}')
  echo "== $1: pid $PID ($(cat /proc/$PID/comm), $(ls /proc/$PID/task | wc -l) threads)"
  tmux capture-pane -p -t idle-tui-$$ | head -2
  A=$(snap $PID); echo "before: $(uptime)"
  sleep 60
  B=$(snap $PID); echo "after:  $(uptime)"
  echo "$A $B" | awk -v hz=$(getconf CLK_TCK) '{printf "CPU %d ms over 60 s (utime %d + stime %d ticks of 1/%d s); context switches: %d voluntary, %d nonvoluntary (%.1f/s)\n", (($5-$1)+($6-$2))*1000/hz, $5-$1, $6-$2, hz, $7-$3, $8-$4, ($7-$3+$8-$4)/60}'
  tmux capture-pane -p -t idle-tui-$$ | head -2
  tmux kill-session -t idle-tui-$$
}
measure "mnemo tui --remote (Explore, idle)" "env MNEMO_TOKEN=$TOKEN $BIN tui --remote http://127.0.0.1:$PORT"
measure "a static Bubble Tea v2 program (the framework's floor)" "$FLOOR"
kill $SRV; wait $SRV 2>/dev/null || true
rm -rf $D
