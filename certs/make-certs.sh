#!/usr/bin/env bash
# Make a development CA and a serving certificate for a webhook Service DNS name, write them
# to certs/out (ca.crt, tls.crt, tls.key), and print the caBundle for the webhook
# configurations. For clusters, prefer the cert-manager resources in deploy/.
#
#   certs/make-certs.sh covenant.covenant-system.svc [more names...]
#   kubectl -n covenant-system create secret tls covenant-tls --cert certs/out/tls.crt --key certs/out/tls.key
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  echo "usage: certs/make-certs.sh DNS-NAME [DNS-NAME...]" >&2
  exit 2
fi
args=()
for name in "$@"; do args+=(--dns "$name"); done
exec cargo run -q --release -- certs "${args[@]}" --out certs/out
