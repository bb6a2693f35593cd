#!/bin/bash
# Symptom-only repositories of our own (bench/own/, in neither half of bench/tasks/): no test fails on them and no
# goal states an example, so a run must write its own reproduction. Runs omni on a fresh git repository of each, as
# bench/run_tasks.py runs it, grades the run's diff with the repository's hidden test, and prints a JSON line per
# repository (its check, each reproduction try, whether the hidden test passes, wall time, first action).
# usage: bench/own_repos.sh OMNI LABEL [NAME...]   (a local server on 127.0.0.1:8080; results in /tmp/own-LABEL.txt)
set -u
OMNI=$1; LABEL=$2; shift 2
OWN=$(cd "$(dirname "$0")/own" && pwd); WORK=/tmp/own-run-$LABEL; OUT=/tmp/own-$LABEL.txt
NAMES=${*:-slug wrap cfg dur ring roman fields}
make_repo() {  # $1 name, $2 target: the repository as the user has it (hidden test and goal left out)
  local base=$1; [ -f "$OWN/$1/on_slug.patch" ] && base=slug
  rm -rf "$2"; mkdir -p "$2"; (cd "$OWN/$base" && tar cf - --exclude=hidden --exclude=goal.txt --exclude='*.patch' .) \
    | (cd "$2" && tar xf -)
  (cd "$2" && { [ "$base" = "$1" ] || git apply "$OWN/$1/on_slug.patch"; } && git init -q && git add -A \
    && git -c user.email=own@omni -c user.name=own commit -qm start)
}
mkdir -p "$WORK"
for name in $NAMES; do
  repo=$WORK/$name; make_repo "$name" "$repo"; cd "$repo"; start=$(date +%s)
  timeout 700 "$OMNI" --yes --no-review --tools core --max-tokens 1024 --max-steps 30 --timeout 600 \
    --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b "$(cat "$OWN/$name/goal.txt")" > "$repo.out" 2>&1
  code=$?; wall=$(( $(date +%s) - start )); run=$(ls -d "$repo"/.omni/runs/*/ | tail -1)
  graded=$WORK/graded-$name; make_repo "$name" "$graded"
  (cd "$graded" && { [ ! -s "$run/diff.patch" ] || git apply "$run/diff.patch"; } && cp -r "$OWN/$name/hidden" . \
    && PYTHONPATH=. python3 -m pytest -q -p no:cacheprovider hidden tests > "$graded.log" 2>&1); passed=$?
  python3 - "$run/events.jsonl" "$name" "$code" "$wall" "$passed" <<'PY' | tee -a "$OUT"
import json, sys
from datetime import datetime
events = [json.loads(line) for line in open(sys.argv[1])]
check = next((e for e in events if e["kind"] == "check"), {})
first = next((e for e in events if e["kind"] == "action"), None)
start = datetime.fromisoformat(events[0]["time"])
print(json.dumps({"repo": sys.argv[2], "exit": int(sys.argv[3]), "wall_s": int(sys.argv[4]),
                  "resolved": sys.argv[5] == "0", "check": check.get("source"),
                  "tries": [[e.get("form", "test"), e["fails_as_it_should"], e["outcome"][:120]]
                            for e in events if e["kind"] == "reproduction_try"],
                  "first_action_s": round((datetime.fromisoformat(first["time"]) - start).total_seconds())
                  if first else None}))
PY
done
