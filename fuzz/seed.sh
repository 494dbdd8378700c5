#!/usr/bin/env bash
# Seed each fuzz target's corpus (fuzz/seeds/<target>, not committed) from the test fixtures
# (themselves copied from the shared corpus; provenance in tests/fixtures/README.md) and,
# when it is present, from ../shared/corpus itself. Small inputs only: a fuzzer learns more
# per second from them.
set -euo pipefail
cd "$(dirname "$0")/.."
out=fuzz/seeds
rm -rf "$out"
mkdir -p "$out/review" "$out/check_yaml" "$out/schema_diff"
max=65536
roots=(tests/fixtures)
[ -d ../shared/corpus ] && roots+=(../shared/corpus)
small() { [ "$(wc -c < "$1")" -le "$max" ]; }
n=0
# AdmissionReview bodies.
while IFS= read -r -d '' f; do
  if small "$f" && grep -q '"AdmissionReview"' "$f"; then n=$((n + 1)); cp "$f" "$out/review/$n.json"; fi
done < <(find "${roots[@]}" -name '*.json' -print0)
# Every YAML document: what `covenant check` reads.
while IFS= read -r -d '' f; do
  if small "$f"; then n=$((n + 1)); cp "$f" "$out/check_yaml/$n.yaml"; fi
done < <(find "${roots[@]}" \( -name '*.yaml' -o -name '*.yml' \) -print0)
# Old/new schema pairs, joined at a NUL byte: the peers' cases (old.yaml/new.yaml and
# *-old.*/*-new.*) and consecutive versions of each CRD history.
pair() {
  small "$1" && small "$2" || return 0
  n=$((n + 1))
  { cat "$1"; printf '\0'; cat "$2"; } > "$out/schema_diff/$n"
}
while IFS= read -r -d '' old; do
  dir=$(dirname "$old")
  case "$old" in
    */old.yaml) if [ -f "$dir/new.yaml" ]; then pair "$old" "$dir/new.yaml"; fi ;;
    *-old.*) new="${old/-old./-new.}"; if [ -f "$new" ]; then pair "$old" "$new"; fi ;;
  esac
done < <(find "${roots[@]}" \( -name 'old.yaml' -o -name '*-old.*' \) -print0)
while IFS= read -r -d '' dir; do
  mapfile -t versions < <(find "$dir" -maxdepth 1 -name '*.yaml' | sort -V)
  for ((i = 1; i < ${#versions[@]}; i++)); do pair "${versions[i-1]}" "${versions[i]}"; done
done < <(find "${roots[@]}" -path '*crd-history/*' -type d -print0)
for t in review check_yaml schema_diff; do
  echo "fuzz/seeds/$t: $(ls "$out/$t" | wc -l) inputs"
done
