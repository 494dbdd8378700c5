#!/usr/bin/env bash
# The memory burst: 32 concurrent large CRD UPDATE reviews sent at once (curl) to a release
# `covenant serve --dev`, and the server's peak resident memory (VmHWM) after all answered.
# The review is the HTTPRoute CRD update of tests/fixtures/bench, its schema spread over 27
# served versions, each made distinct by its description (about 5 MiB, two 2.5 MiB objects),
# so no schema is shared. `make bench-burst`; BIN=path to compare another build.
set -euo pipefail
BIN=${BIN:-target/release/covenant}
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 - "$work/review.json" <<'PY'
import copy, json, sys
review = json.load(open("tests/fixtures/bench/crd-update-400k.json"))
for side in ("object", "oldObject"):
    crd = review["request"][side]
    base = crd["spec"]["versions"][0]
    versions = []
    for i in range(27):
        v = copy.deepcopy(base)
        v["name"], v["served"], v["storage"] = f"v{i}alpha1", True, i == 0
        schema = v["schema"]["openAPIV3Schema"]
        schema["description"] = f"version {i} " + schema.get("description", "")
        versions.append(v)
    crd["spec"]["versions"] = versions
    crd.setdefault("status", {})["storedVersions"] = ["v0alpha1"]
json.dump(review, open(sys.argv[1], "w"), separators=(",", ":"))
PY
port=$((20000 + RANDOM % 20000))
"$BIN" serve --dev --listen 127.0.0.1:$port --admin-listen 127.0.0.1:$((port + 1)) --api-listen 127.0.0.1:0 \
    --dev-cert-dir "$work/certs" > "$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$((port + 1))/readyz" > /dev/null && break
    sleep 0.1
done
echo "review: $(stat -c %s "$work/review.json") bytes, 32 at once to $BIN"
for i in $(seq 1 32); do
    curl -s -o /dev/null -w "%{http_code}\n" --max-time 60 --cacert "$work/certs/ca.crt" \
        --resolve "localhost:$port:127.0.0.1" -H 'content-type: application/json' \
        --data-binary @"$work/review.json" "https://localhost:$port/api/v0/validate?timeout=30s" &
done > "$work/codes"
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
echo "answers: $(sort "$work/codes" | uniq -c | tr -s ' \n' ' ')"
grep VmHWM "/proc/$pid/status"
