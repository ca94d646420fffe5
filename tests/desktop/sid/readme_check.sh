#!/usr/bin/env bash
# Inside the sid chroot (root, via enter.sh), in a copy of the checkout at /opt/ghosttype: the README's
# first command as written, minus its final `ghosttype run` (a daemon), then `ghosttype complete` must
# answer. Writes /out/readme.json: the command, its exit status and duration, the answers.
set -uo pipefail
cd /opt/ghosttype
result() { python3 - "$@" <<'PY'
import json, sys
keys = ("ok", "command", "seconds", "reason", "python")
json.dump(dict(zip(keys, sys.argv[1:])), open("/out/readme.json", "w"), indent=1)
PY
}
suffix=' && .venv/bin/ghosttype run'
line=$(grep -m1 '^sudo packaging/linux/install-deps.sh' README.md || true)
if [[ -z "$line" || "$line" != *"$suffix" ]]; then
  result false "$line" 0 "the README's first command is not 'sudo packaging/linux/install-deps.sh ...$suffix' any more: update this check"
  exit 1
fi
cmd=${line%"$suffix"}
echo "+ $cmd"
t0=$(date +%s)
bash -c "$cmd" >/out/readme-command.log 2>&1
rc=$?
t1=$(date +%s)
py=$(/opt/ghosttype/.venv/bin/python -c 'import sys; print(sys.version.split()[0])' 2>/dev/null || echo none)
if [ $rc != 0 ]; then
  result false "$cmd" $((t1 - t0)) "exit status $rc: $(grep -v '^\s*$' /out/readme-command.log | tail -3 | tr '\n' ' ')" "$py"
  exit 1
fi
echo "README command: $((t1 - t0)) s (system Python $py)"
# `ghosttype complete` answers: for the contexts the desktop scenarios end on, with the engine's max_tokens
phrase=${PHRASE:-Vim is a highly configurable text edi}
.venv/bin/ghosttype complete --help >/out/complete-help.txt 2>&1 || { result false "$cmd" $((t1 - t0)) "ghosttype complete --help failed" "$py"; exit 1; }
de_phrase=${DE_PHRASE:-Schöne Grüße aus Zürich, wo der Käse gut ist. Die Yacht liegt am Bodensee, nahe der Grenze zu Bay}
for ctx in "$phrase" "${phrase%?}" "$de_phrase"; do
  out=$(.venv/bin/ghosttype complete --max-tokens 6 --json --text "$ctx" 2>>/out/complete.err) \
    || { result false "$cmd" $((t1 - t0)) "ghosttype complete failed: $(tail -1 /out/complete.err)" "$py"; exit 1; }
  printf '%s' "$out" | python3 -c 'import json, sys; d = json.load(sys.stdin); d["text"] = sys.argv[1]; print(json.dumps(d))' "$ctx" >>/out/complete.jsonl
done
result true "$cmd" $((t1 - t0)) "" "$py"
cat /out/complete.jsonl
