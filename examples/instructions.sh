#!/usr/bin/env bash
# Instructions per request, whole server: covenant, the bare parse-and-allow webhook and the
# floor (`bare_webhook --floor`), each run under callgrind and sent the same review over one
# kept-alive TLS connection (curl), HTTP/1.1 and HTTP/2. Each server is run twice, with 0 and
# with N requests after the same readiness probe, and the difference is divided by N, so
# start-up and the handshake drop out. Unlike the load bench's CPU time this is exact on a
# shared machine, but it counts no kernel time and no cache misses: read it beside the load
# bench, not instead of it. Needs valgrind and curl.
#
# `make bench-instructions`; BODY=review.json to send another review (default the 4 KB
# Deployment CREATE no rule is concerned with), N=requests (default 200), BIN=another covenant.
set -euo pipefail
BIN=${BIN:-target/release/covenant}
BARE=${BARE:-target/release/examples/bare_webhook}
BODY=${BODY:-tests/fixtures/bench/deployment-create-4k.json}
N=${N:-200}
for tool in valgrind curl; do
    command -v "$tool" > /dev/null || { echo "instructions.sh needs $tool" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$BIN" certs --dns 127.0.0.1 --out "$work/certs" > /dev/null 2>&1
cert=$work/certs/tls.crt
key=$work/certs/tls.key

# instructions NAME PROTO COUNT: the server's total instructions after COUNT requests.
instructions() {
    local name=$1 proto=$2 count=$3 port=$((20000 + RANDOM % 20000)) cmd
    case $name in
        floor) cmd=("$BARE" --cert "$cert" --key "$key" --listen "127.0.0.1:$port" --floor) ;;
        bare) cmd=("$BARE" --cert "$cert" --key "$key" --listen "127.0.0.1:$port") ;;
        covenant) cmd=("$BIN" serve --tls-cert "$cert" --tls-key "$key"
            --context tests/fixtures/openchoreo/published --threads 1 --log-level info --log-format json
            --listen "127.0.0.1:$port" --admin-listen "127.0.0.1:$((port + 1))" --api-listen 127.0.0.1:0) ;;
    esac
    valgrind --tool=callgrind --callgrind-out-file="$work/$name.cg" "${cmd[@]}" > "$work/$name.log" 2>&1 &
    pid=$!
    local url=https://127.0.0.1:$port/api/v0/validate ready=no
    for _ in $(seq 1 300); do
        if curl -sk -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
            --data-binary "@$BODY" "$url" 2> /dev/null | grep -q 200; then
            ready=yes
            break
        fi
        sleep 0.2
    done
    [ $ready = yes ] || { echo "$name did not answer on $url" >&2; cat "$work/$name.log" >&2; exit 1; }
    if [ "$count" -gt 0 ]; then
        {
            echo 'header = "content-type: application/json"'
            echo "data-binary = \"@$BODY\""
            for _ in $(seq 1 "$count"); do
                echo "url = \"$url\""
                echo 'output = "/dev/null"'
            done
        } > "$work/requests"
        curl "$proto" -sk --fail --config "$work/requests"
    fi
    kill -TERM $pid
    wait $pid || true
    pid=
    sed -n 's/^summary: //p' "$work/$name.cg"
}

echo "instructions per request, $BODY, $N requests on one connection"
for proto in --http1.1 --http2; do
    declare -A per
    for name in floor bare covenant; do
        base=$(instructions $name $proto 0)
        total=$(instructions $name $proto "$N")
        per[$name]=$(((total - base) / N))
    done
    awk -v p="${proto#--}" -v f="${per[floor]}" -v b="${per[bare]}" -v c="${per[covenant]}" 'BEGIN {
        printf "  %-8s floor %7d  bare %7d  covenant %7d  covenant/bare %.2fx  net of the floor %.2fx\n",
            p, f, b, c, c / b, (c - f) / (b - f) }'
done
