# Sourced by the `fresh` tests: a brand-new minimal Debian 12 root (debootstrap --variant=minbase),
# the closest thing here to a user's machine that has never seen a compiler. The base system is
# made once and cached as a tarball (BROOK_FRESH_CACHE, default /var/cache/brook-fresh); each root
# is a new copy of it. Commands run in it through chroot inside a private mount namespace, so the
# mounts (proc, sys, dev, CUDA) go away with the command even if it is killed.
#   fresh_root_check              exits 77 (skip) when this machine cannot make one
#   fresh_root_make DIR           unpacks a new root into DIR
#   fresh_root_run DIR COMMAND    runs COMMAND (bash -c) as root in DIR; FRESH_CUDA=1 binds /usr/local/cuda

fresh_cache=${BROOK_FRESH_CACHE:-/var/cache/brook-fresh}

fresh_root_check() {
  if [ "$(id -u)" -ne 0 ]; then echo "SKIP: a fresh root needs root (CI runs as root)"; exit 77; fi
  for tool in debootstrap unshare chroot; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/install-deps.sh installs it)"; exit 1; }
  done
  if ! unshare -m true 2>/dev/null; then echo "SKIP: no mount namespaces here"; exit 77; fi
}

fresh_mirror() {  # the Debian mirror this machine already uses
  local mirror
  mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(grep -m1 -hoE 'https?://[^ ]+' /etc/apt/sources.list 2>/dev/null || true)
  echo "${mirror:-http://deb.debian.org/debian}"
}

fresh_root_make() {
  local root=$1
  mkdir -p "$fresh_cache"
  # One maker at a time (two fresh tests may start together); the tarball appears atomically.
  (
    flock 9
    if [ ! -f "$fresh_cache/base.tar" ]; then
      local tmp="$fresh_cache/root.$$"
      rm -rf "$tmp"
      echo "debootstrap bookworm from $(fresh_mirror) (once; cached in $fresh_cache)"
      debootstrap --variant=minbase bookworm "$tmp" "$(fresh_mirror)" >"$fresh_cache/debootstrap.log" 2>&1 \
        || { tail -n 20 "$fresh_cache/debootstrap.log"; rm -rf "$tmp"; exit 1; }
      tar -C "$tmp" -cf "$fresh_cache/base.tar.part" . && mv "$fresh_cache/base.tar.part" "$fresh_cache/base.tar"
      rm -rf "$tmp"
    fi
  ) 9>"$fresh_cache/.lock" || return 1
  rm -rf "$root" && mkdir -p "$root" && tar -C "$root" -xf "$fresh_cache/base.tar"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    cp /etc/apt/sources.list.d/debian.sources "$root/etc/apt/sources.list.d/" && rm -f "$root/etc/apt/sources.list"
  fi
}

fresh_root_run() {
  local root=$1 command=$2 cuda=""
  if [ "${FRESH_CUDA:-}" = 1 ] && [ -d /usr/local/cuda ]; then
    mkdir -p "$root/usr/local/cuda"
    cuda="mount --bind -o ro /usr/local/cuda '$root/usr/local/cuda';"
  fi
  unshare -m --propagation private bash -c "
    set -e
    mount -t proc proc '$root/proc'; mount --rbind /sys '$root/sys'; mount --rbind /dev '$root/dev'
    $cuda
    chroot '$root' /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive bash -c \"\$0\"" "$command"
}
