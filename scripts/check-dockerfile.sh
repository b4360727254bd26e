#!/bin/bash
# Builds and runs deploy/Dockerfile without a Docker engine or Docker Hub: each stage runs in
# a Debian 12 root file system made by debootstrap, and the Dockerfile's own instructions are
# carried out in it, read from the file so that the check follows it:
#   FROM debian:bookworm-slim  -> `debootstrap --variant=minbase bookworm`
#   FROM swift:<v>-bookworm    -> the same, plus the packages the official Swift image
#                                 installs (swift-docker, <v>/bookworm/Dockerfile) and this
#                                 machine's Swift toolchain (`swift` on PATH, which must be
#                                 version <v>) mounted read-only at /opt/swift
#   ARG (defaults), RUN (`/bin/sh -c` in the chroot), WORKDIR, COPY (from the repository, or
#   --from=<stage>), USER, ENV, ENTRYPOINT, CMD; VOLUME and EXPOSE are noted only
# Then it asserts what the image promises: every shared library the binary needs is in the
# final image (ldd) and the Swift runtime is linked in statically; `switchboard --help` runs;
# the ENTRYPOINT + CMD, started as USER in WORKDIR with ENV, answers /healthz and /readyz,
# creates its token secret (mode 0600, owned by USER) and database in the volume directory,
# and exits 0 on SIGTERM without an error in its log.
#
# Deviation from `docker run`: a chroot shares the host's network, so the server is bound to
# 127.0.0.1 on free ports (SWITCHBOARD_HTTP_HOST/PORT, SWITCHBOARD_MEDIA_HOST/PORT) instead of
# the image's 0.0.0.0:8080 and UDP 10000.
#
# Usage (root; debootstrap from Debian's packages, network to deb.debian.org; ~3 min):
#   scripts/check-dockerfile.sh                 # both stages
#   scripts/check-dockerfile.sh --binary BIN    # the runtime stage only, with BIN as the
#                                               # build stage's /out/switchboard (built with
#                                               # --static-swift-stdlib, as stage 1 does)
#   scripts/check-dockerfile.sh --export PATH   # both stages; on success the image's
#                                               # binary is also copied to PATH
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
DOCKERFILE=$REPO/deploy/Dockerfile
BINARY=""; EXPORT=""
case "${1:-}" in
  --binary) BINARY=$(realpath "${2:?--binary needs a path}") ;;
  --export) EXPORT=${2:?--export needs a path} ;;
  "") ;;
  *) echo "usage: check-dockerfile.sh [--binary BIN | --export PATH]" >&2; exit 2 ;;
esac
WORK=$(mktemp -d)
SPID=""
MOUNTS=()
cleanup() {
  if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null || true; fi
  local i
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do umount "${MOUNTS[$i]}" 2>/dev/null || true; done
  # --one-file-system: never into a mount that failed to come off (the chroots' /proc, the
  # toolchain).
  rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
log() { echo "== $*"; }

# The packages of the official swift:<v>-bookworm image besides the toolchain
# (https://github.com/swiftlang/swift-docker, 6.x bookworm Dockerfile).
SWIFT_IMAGE_PACKAGES="binutils git gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev
  libpython3-dev libsqlite3-0 libstdc++-12-dev libxml2-dev libncurses-dev libz3-dev pkg-config
  tzdata zlib1g-dev"

# Instructions, one per line, continuations joined, comments and blank lines dropped.
INSTRUCTIONS=$(sed -e :a -e '/\\$/N; s/\\\n/ /; ta' "$DOCKERFILE" | grep -v '^\s*#' | grep -v '^\s*$')

BASE=$WORK/base
base_rootfs() {  # $1: target directory; one debootstrap per run, copied for each stage
  if [ ! -x "$BASE/bin/sh" ]; then
    log "debootstrap bookworm (minbase)"
    debootstrap --variant=minbase bookworm "$BASE" http://deb.debian.org/debian > "$WORK/debootstrap.log" 2>&1 \
      || { tail -20 "$WORK/debootstrap.log"; fail "debootstrap"; }
  fi
  cp -a "$BASE" "$1"
  mount -t proc proc "$1/proc"; MOUNTS+=("$1/proc")
}
in_root() {  # $1 root, $2 user, $3 dir, $4... command; environment from ENVS
  # With EXEC=1 the chroot replaces the calling (background) subshell, so that its pid is
  # the server's: chroot, env and sh each exec the next.
  local root=$1 user=$2 dir=$3; shift 3
  local spec=(); [ "$user" != root ] && spec=(--userspec="$user:$user")
  local cmd=(chroot "${spec[@]}" "$root" /usr/bin/env -i HOME=/root PATH="$STAGE_PATH"
             DEBIAN_FRONTEND=noninteractive "${ENVS[@]}" /bin/sh -c "cd '$dir' && exec \"\$@\"" sh "$@")
  if [ "${EXEC:-0}" = 1 ]; then exec "${cmd[@]}"; else "${cmd[@]}"; fi
}
json_words() { python3 -c 'import json,sys; print(" ".join(json.loads(sys.stdin.read())))'; }

declare -A ARGS=() STAGE_ROOT=()
STAGE=-1; ROOT=""; CWD=/; USER_NAME=root; ENVS=(); ENTRY=""; CMD=""
STAGE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
SKIP=0
while IFS= read -r line; do
  op=${line%% *}; rest=${line#* }
  for k in "${!ARGS[@]}"; do rest=${rest//\$\{$k\}/${ARGS[$k]}}; done
  case "$op" in
    ARG)
      [[ "$rest" == *=* ]] && ARGS[${rest%%=*}]=${rest#*=} ;;
    FROM)
      read -r image _ name <<< "$rest"
      STAGE=$((STAGE + 1)); ROOT=$WORK/stage$STAGE; CWD=/; USER_NAME=root; ENVS=(); SKIP=0
      STAGE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
      [ -n "${name:-}" ] && STAGE_ROOT[$name]=$ROOT
      if [[ "$image" == swift:*-bookworm ]] && [ -n "$BINARY" ]; then
        log "FROM $image: skipped (--binary)"; SKIP=1; [ -n "${name:-}" ] && STAGE_ROOT[$name]=""; continue
      fi
      base_rootfs "$ROOT"
      case "$image" in
        debian:bookworm-slim) log "FROM $image" ;;
        swift:*-bookworm)
          want=${image#swift:}; want=${want%-bookworm}
          have=$(swift --version 2>/dev/null | grep -o 'Swift version [0-9.]*' | awk '{print $3}')
          [[ "$have" == "$want" || "$have" == "$want".* ]] || fail "$image needs Swift $want; swift on PATH is ${have:-missing}"
          toolchain=$(dirname "$(dirname "$(dirname "$(realpath "$(command -v swift)")")")")
          log "FROM $image: the image's packages and the toolchain at $toolchain (Swift $have)"
          in_root "$ROOT" root / sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $(echo $SWIFT_IMAGE_PACKAGES)" \
            > "$WORK/swift-image.log" 2>&1 || { tail -20 "$WORK/swift-image.log"; fail "the Swift image's packages"; }
          # Read-only bind mount: the image's /opt/swift without copying 3 GB.
          mkdir -p "$ROOT/opt/swift"
          mount --bind "$toolchain" "$ROOT/opt/swift"; MOUNTS+=("$ROOT/opt/swift")
          mount -o remount,ro,bind "$ROOT/opt/swift"
          STAGE_PATH=/opt/swift/usr/bin:$STAGE_PATH ;;
        *) fail "no stand-in for base image $image: teach this script" ;;
      esac ;;
    RUN)
      [ "$SKIP" = 1 ] && continue
      echo "   RUN $(echo "$rest" | cut -c1-140)"
      in_root "$ROOT" "$USER_NAME" "$CWD" sh -c "$rest" > "$WORK/run.log" 2>&1 \
        || { tail -30 "$WORK/run.log"; fail "RUN $rest"; } ;;
    WORKDIR)
      [ "$SKIP" = 1 ] && continue
      CWD=$rest; mkdir -p "$ROOT$CWD" ;;
    COPY)
      [ "$SKIP" = 1 ] && continue
      read -r -a parts <<< "$rest"
      from=""
      if [[ "${parts[0]}" == --from=* ]]; then from=${parts[0]#--from=}; parts=("${parts[@]:1}"); fi
      dst=${parts[-1]}; srcs=("${parts[@]:0:${#parts[@]}-1}")
      [[ "$dst" == /* ]] || dst=$CWD/$dst
      for src in "${srcs[@]}"; do
        if [ -n "$from" ]; then
          [[ -v STAGE_ROOT[$from] ]] || fail "COPY --from=$from: no stage of that name"
          if [ -z "${STAGE_ROOT[$from]}" ]; then
            [ "$src" = /out/switchboard ] || fail "COPY --from=$from $src: only /out/switchboard can come from --binary"
            path=$BINARY
          else
            path=${STAGE_ROOT[$from]}$src
          fi
        else
          path=$REPO/$src
        fi
        [ -e "$path" ] || fail "COPY: $src not found"
        target=$ROOT$dst; [[ "$dst" == */ ]] && target=$target$(basename "$src")
        mkdir -p "$(dirname "$target")"; rm -rf "$target"; cp -a "$path" "$target"
        echo "   COPY ${from:+--from=$from }$src -> $dst"
      done ;;
    USER) USER_NAME=$rest ;;
    ENV) read -r -a kv <<< "$rest"; ENVS+=("${kv[@]}") ;;
    ENTRYPOINT) ENTRY=$(echo "$rest" | json_words) ;;
    CMD) CMD=$(echo "$rest" | json_words) ;;
    VOLUME|EXPOSE) echo "   $op $rest (not checked)" ;;
    *) fail "instruction $op: teach this script" ;;
  esac
done <<< "$INSTRUCTIONS"

[ "$SKIP" = 0 ] || fail "the last stage was skipped"
[ -n "$ENTRY" ] || fail "no ENTRYPOINT"
BIN_IN_IMAGE=${ENTRY%% *}
log "shared libraries of $BIN_IN_IMAGE (ldd in the image)"
LDD=$(in_root "$ROOT" root / ldd "$BIN_IN_IMAGE")
MISSING=$(echo "$LDD" | grep 'not found' || true)
[ -z "$MISSING" ] || fail "libraries missing from the image: $MISSING"
if echo "$LDD" | grep -E 'libswift|Foundation'; then
  fail "the binary needs the Swift runtime as shared libraries: build it with --static-swift-stdlib"
fi
in_root "$ROOT" root / id "$USER_NAME" > /dev/null || fail "user $USER_NAME was not created"

log "$ENTRY --help (as $USER_NAME)"
in_root "$ROOT" "$USER_NAME" "$CWD" $ENTRY --help > /dev/null || fail "--help"

free_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.'"$1"'); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port SOCK_STREAM); MEDIA_PORT=$(free_port SOCK_DGRAM)
log "$ENTRY $CMD (as $USER_NAME in $CWD; 127.0.0.1:$PORT, media 127.0.0.1:$MEDIA_PORT)"
ENVS+=(SWITCHBOARD_HTTP_HOST=127.0.0.1 SWITCHBOARD_HTTP_PORT="$PORT"
       SWITCHBOARD_MEDIA_HOST=127.0.0.1 SWITCHBOARD_MEDIA_PORT="$MEDIA_PORT")
EXEC=1 in_root "$ROOT" "$USER_NAME" "$CWD" $ENTRY $CMD > "$WORK/serve.log" 2>&1 &
SPID=$!
UP=0
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz" && UP=1 && break
  kill -0 "$SPID" 2>/dev/null || break
  sleep 0.1
done
[ "$UP" = 1 ] || { tail -20 "$WORK/serve.log"; fail "serve did not answer /healthz within 10 s"; }
curl -sf "http://127.0.0.1:$PORT/healthz" > /dev/null || fail "/healthz"
curl -sf "http://127.0.0.1:$PORT/readyz" > /dev/null || fail "/readyz"
# stat inside the image: the host does not know the image's users.
[ "$(in_root "$ROOT" root / stat -c '%a %U' "$CWD/token-secret")" = "600 $USER_NAME" ] \
  || fail "token secret is not mode 0600 and owned by $USER_NAME"
[ -f "$ROOT$CWD/switchboard.sqlite" ] || fail "no database in $CWD"
kill -TERM "$SPID"
for _ in $(seq 50); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$SPID" 2>/dev/null && fail "serve did not stop within 5 s of SIGTERM"
wait "$SPID" && RC=0 || RC=$?
SPID=""
[ "$RC" = 0 ] || { tail -20 "$WORK/serve.log"; fail "serve exited with $RC on SIGTERM"; }
if grep '"level":"error"' "$WORK/serve.log"; then fail "errors in the server's log (above)"; fi
# Size: apt's package cache left out (the official images clean it after every install;
# debootstrap's tree does not).
[ -z "$EXPORT" ] || install -D -m 0755 "$ROOT$BIN_IN_IMAGE" "$EXPORT"
echo "OK: deploy/Dockerfile's image runs the server (binary $(du -h "$ROOT$BIN_IN_IMAGE" | cut -f1)," \
  "file system without apt's cache $(du -sh --exclude=proc --exclude=var/cache/apt "$ROOT" | cut -f1))"
