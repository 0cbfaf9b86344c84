#!/usr/bin/env bash
# What a test run may leave behind, recorded before and compared after (issue 43: a test left a
# tmpfs mounted under /tmp): mounts under the temp dirs, temp entries, orphaned child processes
# (geth, evm, gigagas, revme, a browser, sleep). Usage:
#   scripts/machine-state.sh snapshot FILE   # mounts under the temp dirs + temp dir entries
#   scripts/machine-state.sh check FILE      # fails, naming them, if anything new is there
# The temp dirs are /tmp and $TMPDIR (when set). Mount points are read from /proc/mounts.
set -euo pipefail
mode=${1:?usage: machine-state.sh snapshot|check FILE}
file=${2:?usage: machine-state.sh snapshot|check FILE}
dirs=(/tmp)
if [ -n "${TMPDIR:-}" ] && [ "${TMPDIR%/}" != /tmp ]; then dirs+=("${TMPDIR%/}"); fi

state() {
  # Mounts whose mount point is inside a temp dir (field 2 of /proc/mounts, octal-escaped).
  for d in "${dirs[@]}"; do
    awk -v d="$d" '$2 == d || index($2, d "/") == 1 { print "mount " $1 " " $2 " " $3 }' /proc/mounts
  done
  # Orphaned children a test may leave running (a node, an evm, a browser): processes of
  # those names whose parent is init (a live test's child has the test as its parent).
  ps -e -o pid=,ppid=,comm= 2>/dev/null |
    awk '$2 == 1 && $3 ~ /^(geth|evm|gigagas|revme|chromium|chromium-headl|chrome|sleep)/ { print "process " $1 " " $3 }'
  # The temp dirs' entries (one level; names only).
  for d in "${dirs[@]}"; do
    [ -d "$d" ] && find "$d" -mindepth 1 -maxdepth 1 -printf "entry $d/%f\n" 2>/dev/null
  done
  true
}

case "$mode" in
  snapshot) state | sort > "$file" ;;
  check)
    now="$file.now"
    state | sort > "$now"
    new=$(comm -13 "$file" "$now" | grep -v -F -e "$file" || true)
    rm -f "$now"
    # Every new mount counts, and every new entry of $TMPDIR (CI points it at a fresh
    # directory for the tests). In /tmp, shared with the rest of the machine (compilers' cc*
    # files, other users), the names tests make count: tempfile's .tmp*, gigagas*, mktemp's
    # tmp.*.
    tmp_re='/tmp/(\.tmp[^/]*|gigagas[^/]*|tmp\.[^/]*)$'
    if [ "${#dirs[@]}" -gt 1 ]; then
      leftovers=$(printf '%s\n' "$new" | grep -E -e '^(mount|process) ' -e "$tmp_re" -e "^entry ${dirs[1]}/" || true)
    else
      leftovers=$(printf '%s\n' "$new" | grep -E -e '^(mount|process) ' -e "$tmp_re" || true)
    fi
    if [ -n "$leftovers" ]; then
      echo "machine-state: the tests left these behind:" >&2
      printf '  %s\n' "$leftovers" >&2
      exit 1
    fi
    echo "machine-state: nothing left behind (no new mount under ${dirs[*]}, no new temp entry, no orphaned process)"
    ;;
  *) echo "usage: machine-state.sh snapshot|check FILE" >&2; exit 2 ;;
esac
