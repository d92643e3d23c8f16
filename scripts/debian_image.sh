# Shared by scripts/build_test_image.sh and scripts/build_user_image.sh (sourced, not run): a
# minimal Debian made with debootstrap into a folder, given one user, slimmed and handed to
# `docker import` (there is no registry to pull from). Messages go to stderr.
#
# Env: DEBIAN_MIRROR (default http://deb.debian.org/debian), DEBIAN_SUITE (default bookworm).

suite="${DEBIAN_SUITE:-bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# debootstrap needs root and its own program: say how to get them, and stop.
require_debootstrap() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "debootstrap needs root: run this script as root (or with sudo)" >&2
    exit 1
  fi
  if ! command -v debootstrap >/dev/null 2>&1; then
    echo "debootstrap is missing: apt-get install -y debootstrap" >&2
    exit 1
  fi
}

# bootstrap_rootfs NAME PACKAGES: a minbase Debian with PACKAGES (comma-separated) in a new
# folder, whose path is left in $root (removed when the script exits).
bootstrap_rootfs() {
  root="$(mktemp -d "/var/tmp/$1-rootfs.XXXXXX")"
  trap 'rm -rf "$root" "$root.log"' EXIT
  echo "debootstrap --variant=minbase $suite ($2) from $mirror ..." >&2
  debootstrap --variant=minbase --include="$2" "$suite" "$root" "$mirror" \
    >"$root.log" 2>&1 || { tail -n 40 "$root.log" >&2; exit 1; }
}

# add_user_and_slim NAME SHELL: a user as on any machine (uid 1000, a home of their own), and
# nothing the image does not need at run time (apt's lists, docs, man pages, logs).
add_user_and_slim() {
  chroot "$root" useradd --create-home --uid 1000 --user-group --shell "$2" "$1"
  chroot "$root" apt-get clean
  rm -rf "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/* \
    "$root"/var/cache/debconf/*-old "$root"/var/log/*.log
}

# import_rootfs TAG [--change ...]: $root as the image TAG, with a PATH and a UTF-8 locale.
import_rootfs() {
  local tag=$1
  shift
  tar --numeric-owner -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    "$@" - "$tag" >/dev/null
}
