"""Is a folder on a network filesystem? Read from /proc/self/mountinfo (the mount holding the folder's real path),
so a journal there gets one loud warning: file locks over NFS, SMB or sshfs are unreliable, and two hosts may
corrupt the study. PostgreSQL or `playground sweep serve` (one writer) are the safe choices there.
"""
from __future__ import annotations

import os
import sys

NETWORK_TYPES = {"nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "9p", "afs", "ceph", "glusterfs", "lustre",
                 "gpfs", "beegfs", "fuse.sshfs", "fuse.glusterfs", "fuse.cephfs", "fuse.s3fs", "fuse.gcsfuse",
                 "fuse.rclone", "fuse.juicefs"}
_warned: set[str] = set()


def mount_of(path: str, mountinfo: str) -> tuple[str, str]:
    """(mount point, filesystem type) of the mount holding the absolute `path`, from mountinfo's text.

    A line is `id parent major:minor root mountpoint options [optional fields...] - fstype source superopts`;
    spaces in paths are written \\040. The longest mount point that contains `path` wins (later lines win ties:
    they are mounted over the earlier ones)."""
    best = ("/", "")
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 5 or not tail:
            continue
        point = _unescape(fields[4])
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[0]):
            best = (point, tail[0])
    return best


def network_filesystem(folder: str, mountinfo_path: str = "/proc/self/mountinfo") -> str | None:
    """The network filesystem type holding `folder` (its nearest existing parent), or None."""
    path = os.path.realpath(folder)
    while not os.path.exists(path) and path != "/":
        path = os.path.dirname(path)
    try:
        with open(mountinfo_path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return None
    fstype = mount_of(path, text)[1]
    return fstype if fstype in NETWORK_TYPES or fstype.startswith("nfs") else None


def warn_if_network_filesystem(folder: str, mountinfo_path: str = "/proc/self/mountinfo") -> str | None:
    """Print the warning once per folder and process; returns the filesystem type when it is a network one."""
    fstype = network_filesystem(folder, mountinfo_path)
    if fstype and folder not in _warned:
        _warned.add(folder)
        bar = "!" * 100
        print(f"{bar}\nWARNING: the sweep's journal {folder} is on a network filesystem ({fstype}). File locks are "
              f"unreliable there:\nagents on several hosts may corrupt the study. It is fine for a small sweep run "
              f"from one host; otherwise\nuse PostgreSQL (--storage postgresql://user@host:port/db) or one "
              f"writer: `playground sweep serve {folder}`\n"
              f"and --storage grpc://host:port (docs/sweeps.md, Storages).\n{bar}", file=sys.stderr, flush=True)
    return fstype


def _unescape(field: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field
