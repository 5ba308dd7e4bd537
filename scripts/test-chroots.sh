#!/usr/bin/env bash
# Installs Reservoir where nothing else is, in clean Debian chroots made with debootstrap (as root;
# Debian's mirror must be reachable). Not in CI: docs/install.md has the output.
#   scripts/test-chroots.sh wheel WHEEL      bookworm minbase + python3, python3-venv only: the wheel in a
#                                            venv (pip), `reservoir info` and a what-if, and the
#                                            CLI's answer where LibTorch and MPI are missing
#   scripts/test-chroots.sh binary BUILD     bookworm minbase: BUILD's reservoir binary and its plugins
#                                            (built where CUDA and OpenMPI were found), copied in: info
#                                            and whatif run; the cuda backend and the MPI driver say
#                                            which library is missing (exit 2)
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
# step COMMAND...: one command in the chroot, its output, and FAILED with its exit code (the rest still runs)
failed=0
step() { local rc=0; in_chroot "$@" || rc=$?; [ $rc -eq 0 ] || { echo "FAILED (exit $rc): $*"; failed=1; }; }
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
    log "python3 -m venv /venv; pip install --no-index $(basename "$wheel")"
    step sh -c "python3 --version && python3 -m venv /venv && /venv/bin/pip install -q --no-index --disable-pip-version-check /tmp/$(basename "$wheel")"
    log "what the module needs here (ldd): only libc, libm, libgcc_s and the loader"
    step sh -c 'ldd /venv/lib/python3*/site-packages/reservoir/_core*.so'
    step /venv/bin/reservoir --version
    step sh -c "/venv/bin/reservoir info /tmp/t/resume-main.rank0.pickle | head -8"
    step sh -c "/venv/bin/reservoir whatif /tmp/t/resume-main.rank0.pickle --cleanup $point --probe $point | head -8"
    step /venv/bin/python -c "import reservoir; r = reservoir.load('/tmp/t/resume-main.rank0.pickle').whatif(cleanup=['$point'], probe=['$point']); print('import reservoir: reserved after the load', r['whatif']['probes']['$point']['reserved'], 'peak reserved', r['whatif']['peak_reserved'])"
    step sh -c "/venv/bin/python -m reservoir.capture --help | head -3"
    log "what is missing here is named: replay --backend torch (exit 2)"
    step sh -c "/venv/bin/reservoir replay /tmp/t/resume-main.rank0.pickle --backend torch; test \$? -eq 2"
    ;;
  binary)
    build="${2:?usage: $0 binary BUILD}"
    fresh bookworm binary
    mkdir -p "$CHROOT/opt/rsv" "$CHROOT/tmp/t"
    cp "$build/replay/cli/reservoir" "$build"/replay/cli/*.so "$CHROOT/opt/rsv/" && cp "$root/$trace" "$CHROOT/tmp/t/"
    log "copied: $(cd "$CHROOT/opt/rsv" && ls | tr '\n' ' ')"
    step sh -c 'ldd /opt/rsv/reservoir | sed "s/ (0x.*//"'
    step sh -c "/opt/rsv/reservoir info /tmp/t/resume-main.rank0.pickle | head -4"
    step sh -c "/opt/rsv/reservoir whatif /tmp/t/resume-main.rank0.pickle --cleanup $point --probe $point | head -3"
    log "the plugins whose libraries are missing here (exit 2)"
    step sh -c "/opt/rsv/reservoir replay /tmp/t/resume-main.rank0.pickle --backend cuda; test \$? -eq 2"
    step sh -c "OMPI_COMM_WORLD_SIZE=2 /opt/rsv/reservoir info /tmp/t/resume-main.rank0.pickle; test \$? -eq 2"
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
    step dpkg-query -W -f='${Package} ${Version}: Depends: ${Depends}\n' reservoir
    log "what the binaries need here (ldd): no CUDA, LibTorch, MPI or fmt"
    step sh -c 'for f in /usr/bin/reservoir /usr/bin/reservoir-gui; do echo "$f:"; ldd $f | sed "s/ (0x.*//"; done'
    step reservoir --version
    step sh -c "reservoir whatif /tmp/t/resume-main.rank0.pickle --cleanup $point --probe $point | head -8"
    step python3 -c "import reservoir; d = reservoir.load('/tmp/t/resume-main.rank0.pickle').info()['devices'][0]; print('import reservoir (Debian python3):', d['events'], 'events, peak reserved', d['peak_reserved'])"
    log "reservoir-gui --screenshot (offscreen)"
    step sh -c "QT_QPA_PLATFORM=offscreen reservoir-gui /tmp/t/resume-main.rank0.pickle --screenshot /tmp/gui.png && ls -l /tmp/gui.png"
    cp "$CHROOT/tmp/gui.png" "$work/deb-gui.png" 2> /dev/null && log "screenshot: $work/deb-gui.png"
    if ls "$CHROOT"/tmp/debs/reservoir-mpi_*.deb > /dev/null 2>&1; then
      log "under an MPI launcher without reservoir-mpi installed (exit 2)"
      step sh -c "OMPI_COMM_WORLD_SIZE=2 reservoir info /tmp/t/resume-main.rank0.pickle; test \$? -eq 2"
      log "apt-get install ./reservoir-mpi_*.deb openmpi-bin: mpirun -n 2 reservoir check (two traces, one per process)"
      step sh -c "cd / && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ./tmp/debs/reservoir-mpi_*.deb openmpi-bin > /tmp/apt-mpi.log 2>&1 || { tail /tmp/apt-mpi.log; exit 1; }"
      step sh -c "cp /tmp/t/resume-main.rank0.pickle /tmp/t/copy.pickle && mpirun --allow-run-as-root --oversubscribe -n 2 reservoir check /tmp/t/resume-main.rank0.pickle /tmp/t/copy.pickle | tail -3"
    fi
    log "replay --backend cuda (not packaged: exit 2)"
    step sh -c "reservoir replay /tmp/t/resume-main.rank0.pickle --backend cuda; test \$? -eq 2"
    ;;
  setup)
    suite="${2:?usage: $0 setup SUITE}"
    fresh "$suite" "setup-$suite"
    log "$suite minbase: the checkout (git archive HEAD) and scripts/setup.sh"
    in_chroot cat /etc/debian_version
    mkdir -p "$CHROOT/src"
    git -C "$root" archive HEAD | tar -C "$CHROOT/src" -x
    apt_in ca-certificates
    rc=0
    in_chroot sh -c "cd /src && ./scripts/setup.sh" > "$work/setup-$suite.log" 2>&1 || rc=$?
    grep -E "^installing:" "$work/setup-$suite.log" | cut -c1-400
    in_chroot sh -c "c++ --version | head -1; cmake --version | head -1; python3 --version"
    tail -14 "$work/setup-$suite.log"
    [ $rc -eq 0 ] || { echo "FAILED: scripts/setup.sh exited $rc (the whole output: $work/setup-$suite.log)"; failed=1; }
    ;;
  *)
    sed -n '2,12p' "$0"
    exit 2
    ;;
esac
log "done"
exit $failed
