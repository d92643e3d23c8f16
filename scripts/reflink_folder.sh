#!/usr/bin/env bash
# A folder on a file system that clones files (XFS made with reflink=1, in a sparse 2 GiB file
# mounted through a loop device), for tests/vcs/test_spare_clone.py: the shadows of steps
# prepared side by side share their blocks there. Needs root, a loop device and xfsprogs;
# anything missing is said and the tests that need it skip.
#
#   sudo scripts/reflink_folder.sh DIR      # mounts it at DIR (made); `umount DIR` undoes it
#   REFLINK_TEST_DIR=DIR python -m pytest tests/vcs/test_spare_clone.py
set -euo pipefail
dir=$1
image="$dir.img"
if ! command -v mkfs.xfs >/dev/null 2>&1; then
  { apt-get update -qq && apt-get install -y -qq xfsprogs >/dev/null; } \
    || { echo "warning: no mkfs.xfs (xfsprogs): the reflink tests skip" >&2; exit 0; }
fi
mkdir -p "$dir"
truncate -s 2G "$image"
if mkfs.xfs -q -f -m reflink=1 "$image" && mount -o loop "$image" "$dir"; then
  chmod 1777 "$dir"
  echo "== a file system with reflinks at $dir"
else
  echo "warning: could not mount an XFS with reflinks at $dir: the reflink tests skip" >&2
fi
