# Shared set-up of tools/test-*.sh: sourced with the test's name as $1.
# Defines repo (the repository), work (a fresh directory, removed at exit
# unless BOXROOT_KEEP_TMP=1), say and fail.
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d "/tmp/boxroot-$1.XXXXXX")"
[ -n "${BOXROOT_KEEP_TMP:-}" ] || trap 'rm -rf "$work"' EXIT
test_name="test-$1"
say() { echo "$test_name: $*"; }
fail() { echo "$test_name: FAIL: $*" >&2; exit 1; }
