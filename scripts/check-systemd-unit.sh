#!/bin/bash
# Runs deploy/switchboard.service under a real systemd, where this machine's PID 1 is not
# one: a Debian 12 tree from debootstrap with systemd is booted with systemd-nspawn (own
# network namespace: loopback only), the server installed as the unit's header says
# (binary in /usr/local/bin, unit in /etc/systemd/system, config in /etc/switchboard), and a
# check unit in the container asserts, with every hardening option of the unit in force:
#   - the service comes up: /healthz 200 and /readyz ready;
#   - complete calls work: `switchboard bench signaling` (4 pairs, 20 idle devices, 4 s)
#     against it, no error;
#   - its state is in the StateDirectory, owned by the dynamic user, files mode 0600;
#   - Restart=on-failure: after SIGKILL the service is back (NRestarts = 1) and healthy;
#   - `systemctl stop` ends it cleanly (Result=success, status 0);
#   - no error in its log, no complaint from systemd about the unit (`systemd-analyze
#     verify`, a directory whose mode differs from the unit's).
#
# Usage (root; debootstrap and systemd-container from Debian's packages, network to
# deb.debian.org; ~2 min):
#   swift build -c release --product switchboard --static-swift-stdlib
#   scripts/check-systemd-unit.sh .build/release/switchboard
# The binary must not need the Swift runtime as shared libraries (--static-swift-stdlib), as
# for the container image; the C libraries come from the packages of the Dockerfile's
# runtime stage.
set -euo pipefail
BIN=$(realpath "${1:?usage: check-systemd-unit.sh BIN}")
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
ROOT=$WORK/rootfs
trap 'rm -rf --one-file-system "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v systemd-nspawn > /dev/null || fail "systemd-nspawn missing (apt-get install systemd-container)"

# The runtime libraries: the Dockerfile's runtime stage installs them, so that list is used.
PACKAGES=$(awk '/^FROM debian:bookworm-slim/ {on=1} on' "$REPO/deploy/Dockerfile" \
  | sed -e :a -e '/\\$/N; s/\\\n/ /; ta' | grep -o 'apt-get install [^&]*' | head -1 \
  | tr -s ' ' '\n' | grep -v -e '^-' -e '^apt-get$' -e '^install$' -e '^$' | tr '\n' ' ')
[ -n "$(echo $PACKAGES)" ] || fail "no apt-get install in the Dockerfile's runtime stage"

echo "== debootstrap bookworm (minbase, systemd)"
debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus bookworm "$ROOT" \
  http://deb.debian.org/debian > "$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log"; fail "debootstrap"; }
echo "== packages: curl" $PACKAGES
chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends curl $(echo $PACKAGES)" \
  > "$WORK/apt.log" 2>&1 || { tail -20 "$WORK/apt.log"; fail "apt-get install"; }

echo "== install as deploy/switchboard.service says"
install -D -m 0755 "$BIN" "$ROOT/usr/local/bin/switchboard"
install -D -m 0644 "$REPO/deploy/switchboard.service" "$ROOT/etc/systemd/system/switchboard.service"
install -d -m 0755 "$ROOT/etc/switchboard"
install -m 0644 "$REPO/deploy/switchboard.conf" "$ROOT/etc/switchboard/switchboard.conf"

cat > "$ROOT/usr/local/sbin/switchboard-check" <<'EOF'
#!/bin/sh
# Runs in the container after switchboard.service; one "CHECK name ok|FAIL" line per check.
check() { if [ "$2" = ok ]; then echo "CHECK $1 ok"; else echo "CHECK $1 FAIL: $2"; fi; }
healthy() {
  for i in $(seq 150); do curl -sf -o /dev/null http://127.0.0.1:8080/healthz && return 0; sleep 0.1; done
  return 1
}
STATE=/var/lib/private/switchboard
healthy && check up ok || check up "no /healthz within 15 s"
case "$(curl -s http://127.0.0.1:8080/readyz)" in *ready*) check ready ok ;; *) check ready "readyz: not ready" ;; esac
OUT=$(/usr/local/bin/switchboard bench signaling --url ws://127.0.0.1:8080/v1/ws \
  --secret-file $STATE/token-secret --idle 20 --pairs 4 --duration 4 --warmup 1 2>&1)
SETUPS=$(echo "$OUT" | awk '/complete setups/ {print $5}' | tr -d '(')
if [ "${SETUPS:-0}" -gt 0 ] && echo "$OUT" | grep -q '^errors: 0'; then check calls ok
else check calls "$(echo "$OUT" | grep -E 'complete setups|errors' | tr '\n' ' ')"; fi
echo "   $(echo "$OUT" | grep 'complete setups')"
# The dynamic user has a name only while the unit runs: compare uids with the main process.
UID_RUNNING=$(awk '/^Uid:/ {print $2}' /proc/$(systemctl show -p MainPID --value switchboard)/status)
FOREIGN=$(find $STATE -type f ! -uid "$UID_RUNNING")
BAD=$(find $STATE -type f ! -perm 0600)
[ "$UID_RUNNING" != 0 ] && [ -z "$FOREIGN" ] && [ -z "$BAD" ] && check state ok \
  || check state "service uid $UID_RUNNING; files of another uid: $FOREIGN; not 0600: $BAD"
systemctl kill -s KILL switchboard
sleep 1
healthy && [ "$(systemctl show -p NRestarts --value switchboard)" = 1 ] && check restart ok \
  || check restart "$(systemctl show -p NRestarts,ActiveState switchboard | tr '\n' ' ')"
systemctl stop switchboard
S=$(systemctl show -p Result,ExecMainStatus switchboard | tr '\n' ' ')
case "$S" in *Result=success*ExecMainStatus=0*|*ExecMainStatus=0*Result=success*) check stop ok ;; *) check stop "$S" ;; esac
# Errors from the server, and systemd's complaints about the unit (a directory mode that
# differs from the installed one's, an unknown setting).
ERRORS=$(journalctl -b -u switchboard -o cat --no-pager \
  | grep -E '"level":"error"|^switchboard: |mode is different|Unknown key|Ignoring' || true)
[ -z "$ERRORS" ] && check log ok || check log "$ERRORS"
VERIFY=$(systemd-analyze verify /etc/systemd/system/switchboard.service 2>&1)
[ -z "$VERIFY" ] && check verify ok || check verify "$VERIFY"
echo "--- journal of switchboard.service"
journalctl -b -u switchboard -o cat --no-pager | grep -v '"device connected"\|"device disconnected"' | cut -c1-200
EOF
chmod 0755 "$ROOT/usr/local/sbin/switchboard-check"
cat > "$ROOT/etc/systemd/system/switchboard-check.service" <<'EOF'
[Unit]
Description=Checks switchboard.service, then powers off
After=switchboard.service
# Wants, not Requires: the check stops switchboard.service itself.
Wants=switchboard.service
[Service]
Type=oneshot
TimeoutStartSec=120
ExecStart=/bin/sh -c '/usr/local/sbin/switchboard-check > /check.txt 2>&1; systemctl poweroff'
[Install]
WantedBy=multi-user.target
EOF
systemctl --root="$ROOT" enable switchboard.service switchboard-check.service > /dev/null 2>&1

echo "== boot (systemd-nspawn, private network)"
# --keep-unit --register=no: no systemd on the host to create a scope or register with.
timeout 180 systemd-nspawn -D "$ROOT" -b --register=no --keep-unit --private-network --console=pipe \
  > "$WORK/boot.log" 2>&1 || { tail -30 "$WORK/boot.log"; [ -f "$ROOT/check.txt" ] && cat "$ROOT/check.txt"; fail "the container did not power off by itself within 180 s"; }
[ -f "$ROOT/check.txt" ] || { tail -30 "$WORK/boot.log"; fail "the check did not run"; }
grep -E '^CHECK|^   ' "$ROOT/check.txt"
N=$(grep -c '^CHECK .* ok$' "$ROOT/check.txt" || true)
if grep -q '^CHECK .* FAIL' "$ROOT/check.txt" || [ "$N" != 8 ]; then
  sed -n '/^--- journal/,$p' "$ROOT/check.txt" | tail -30
  fail "$N of 8 checks passed"
fi
echo "OK: deploy/switchboard.service runs the server under systemd with its hardening"
