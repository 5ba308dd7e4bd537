#!/usr/bin/env bash
# Installs Reservoir where nothing else is, in clean Debian chroots made with debootstrap (as root;
# Debian's mirror must be reachable). Not in CI: docs/install.md has the output.
#   scripts/test-chroots.sh wheel WHEEL      bookworm minbase + python3, python3-venv only: the wheel in a
#                                            venv (pip), `reservoir info` and a what-if, and the
#                                            CLI's answer where LibTorch and MPI are missing
#   scripts/test-chroots.sh deb DEB...       bookworm minbase: `apt-get install ./reservoir_*.deb`, the
#                                            CLI, `import reservoir`, `reservoir-gui --screenshot` offscreen
#   scripts/test-chroots.sh setup SUITE      SUITE (e.g. trixie) minbase: the README's scripts/setup.sh on
#                                            a copy of this checkout (git archive HEAD)
# Chroots live in build-chroot/ (the minbase trees are made once and copied for each test).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/build-chroot"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$work"
command -v debootstrap > /dev/null || { apt-get install -y -qq debootstrap > /dev/null; }
log() { echo "[$(date +%H:%M:%S)] $*"; }

base() {  # base SUITE: a minbase tree of SUITE, made once
  local suite=$1
  if [ ! -f "$work/$suite.tar" ]; then
    log "debootstrap --variant=minbase $suite"
    rm -rf "$work/$suite-base"
    debootstrap --variant=minbase "$suite" "$work/$suite-base" "$mirror" > "$work/$suite-debootstrap.log" 2>&1
    tar -C "$work/$suite-base" -cf "$work/$suite.tar" .
    rm -rf "$work/$suite-base"
  fi
}

CHROOT=""
fresh() {  # fresh SUITE NAME: a new chroot from SUITE's tree, with /proc, /dev and DNS
  base "$1"
  CHROOT="$work/$2"
  cleanup
  mkdir -p "$CHROOT"
  tar -C "$CHROOT" -xf "$work/$1.tar"
  cp /etc/resolv.conf "$CHROOT/etc/resolv.conf"
  mount -t proc proc "$CHROOT/proc"
  mount --bind /dev "$CHROOT/dev"
  trap cleanup EXIT
}
cleanup() {
  [ -n "$CHROOT" ] || return 0
  for m in dev proc; do mountpoint -q "$CHROOT/$m" && umount "$CHROOT/$m"; done
  rm -rf "$CHROOT"
}
in_chroot() { chroot "$CHROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 "$@"; }
apt_in() { in_chroot sh -c "DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $* > /tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 1; }"; }
trace=traces/samples/resume-tiny/resume-main.rank0.pickle
point=after:state_dict_loader.py:load

case "${1:-}" in
  wheel)
    wheel="${2:?usage: $0 wheel WHEEL}"
    fresh bookworm wheel
    log "bookworm minbase: apt-get install python3 python3-venv"
    apt_in python3 python3-venv
    cp "$wheel" "$CHROOT/tmp/"
    mkdir -p "$CHROOT/tmp/t" && cp "$root/$trace" "$CHROOT/tmp/t/"
    in_chroot sh -c 'ls /usr/lib/x86_64-linux-gnu | grep -E "libstdc\+\+|libzstd|libfmt|libmpi|libcudart|libQt6" || echo "(no libstdc++, zstd, fmt, MPI, CUDA or Qt library on this machine)"'
    log "python3 -m venv /venv; pip install --no-index $(basename "$wheel")"
    in_chroot sh -c "python3 --version && python3 -m venv /venv && /venv/bin/pip install -q --no-index --disable-pip-version-check /tmp/$(basename "$wheel")"
    in_chroot /venv/bin/reservoir --version
    in_chroot /venv/bin/reservoir info /tmp/t/resume-main.rank0.pickle | head -8
    in_chroot /venv/bin/reservoir whatif /tmp/t/resume-main.rank0.pickle --cleanup "$point" --probe "$point" | head -12
    in_chroot /venv/bin/python -c "import reservoir; r = reservoir.load('/tmp/t/resume-main.rank0.pickle').whatif(cleanup=['$point']); print('import reservoir: whatif peak reserved', r['whatif']['peak_reserved'])"
    in_chroot /venv/bin/python -m reservoir.capture --help | head -3
    log "what is missing here is named: replay --backend torch"
    in_chroot sh -c "/venv/bin/reservoir replay /tmp/t/resume-main.rank0.pickle --backend torch; echo exit \$?"
    ;;
  deb)
    shift
    [ $# -ge 1 ] || { echo "usage: $0 deb DEB..." >&2; exit 2; }
    fresh bookworm deb
    mkdir -p "$CHROOT/tmp/debs" "$CHROOT/tmp/t"
    cp "$@" "$CHROOT/tmp/debs/" && cp "$root/$trace" "$CHROOT/tmp/t/"
    debs=$(cd "$CHROOT/tmp/debs" && ls reservoir_*.deb | sed 's#^#./tmp/debs/#')
    log "bookworm minbase: apt-get install $debs"
    in_chroot sh -c "cd / && DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $debs > /tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 1; }"
    in_chroot dpkg-query -W -f='${Package} ${Version}: Depends: ${Depends}\n' reservoir
    in_chroot sh -c 'for f in /usr/bin/reservoir /usr/bin/reservoir-gui; do echo "$f NEEDED: $(readelf -d $f 2>/dev/null | grep -o "\[lib[^]]*\]" | tr -d "[]" | tr "\n" " " || objdump -p $f | grep NEEDED)"; done' || true
    in_chroot reservoir --version
    in_chroot reservoir whatif /tmp/t/resume-main.rank0.pickle --cleanup "$point" --probe "$point" | head -12
    in_chroot python3 -c "import reservoir; print('import reservoir:', reservoir.load('/tmp/t/resume-main.rank0.pickle').info()['peak_reserved'] if 'peak_reserved' in reservoir.load('/tmp/t/resume-main.rank0.pickle').info() else 'info ok')"
    log "reservoir-gui --screenshot (offscreen)"
    in_chroot sh -c "QT_QPA_PLATFORM=offscreen reservoir-gui /tmp/t/resume-main.rank0.pickle --screenshot /tmp/gui.png && ls -l /tmp/gui.png"
    cp "$CHROOT/tmp/gui.png" "$work/deb-gui.png" && log "screenshot: $work/deb-gui.png"
    log "under an MPI launcher without reservoir-mpi installed"
    in_chroot sh -c "OMPI_COMM_WORLD_SIZE=2 reservoir info /tmp/t/resume-main.rank0.pickle; echo exit \$?"
    log "replay --backend cuda (not packaged)"
    in_chroot sh -c "reservoir replay /tmp/t/resume-main.rank0.pickle --backend cuda; echo exit \$?"
    ;;
  setup)
    suite="${2:?usage: $0 setup SUITE}"
    fresh "$suite" "setup-$suite"
    log "$suite minbase: the checkout (git archive HEAD) and scripts/setup.sh"
    in_chroot cat /etc/debian_version
    mkdir -p "$CHROOT/src"
    git -C "$root" archive HEAD | tar -C "$CHROOT/src" -x
    apt_in ca-certificates
    in_chroot sh -c "cd /src && ./scripts/setup.sh" 2>&1 | tail -25
    ;;
  *)
    sed -n '2,12p' "$0"
    exit 2
    ;;
esac
log "done"
