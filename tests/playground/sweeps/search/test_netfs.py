"""A sweep folder on a network filesystem: the mount found in real mountinfo text, and the one loud warning."""
from __future__ import annotations

from playground.sweeps.search.netfs import mount_of, network_filesystem, warn_if_network_filesystem

MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 0:26 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/docker/l1,upperdir=/u,workdir=/w
31 27 8:1 / /scratch rw,relatime shared:1 - ext4 /dev/sda1 rw
45 27 0:40 / /home rw,relatime shared:20 - nfs4 fs01:/export/home rw,vers=4.2,rsize=1048576,hard,proto=tcp
46 45 0:41 / /home/ann/remote\\040box rw,nosuid,nodev,relatime shared:21 - fuse.sshfs ann@box:/data rw,user_id=1000
47 27 0:42 / /projects rw,relatime shared:22 - cifs //nas/projects rw,vers=3.1.1,cache=strict
"""


def test_the_mount_holding_a_path_is_found_in_mountinfo():
    assert mount_of("/home/ann/sweeps/lr", MOUNTINFO) == ("/home", "nfs4")
    assert mount_of("/home/ann/remote box/sweeps", MOUNTINFO) == ("/home/ann/remote box", "fuse.sshfs")
    assert mount_of("/projects/x", MOUNTINFO) == ("/projects", "cifs")
    assert mount_of("/scratch/sweeps", MOUNTINFO) == ("/scratch", "ext4")
    assert mount_of("/homely", MOUNTINFO) == ("/", "overlay")


def test_a_journal_on_nfs_gets_one_loud_warning_pointing_to_postgres_and_serve(tmp_path, capsys):
    folder = tmp_path / "sweep"
    folder.mkdir()
    fake = tmp_path / "mountinfo"
    fake.write_text(MOUNTINFO + f"60 27 0:50 / {tmp_path} rw,relatime - nfs fs02:/export rw,vers=3\n")
    assert warn_if_network_filesystem(str(folder), str(fake)) == "nfs"
    warn_if_network_filesystem(str(folder), str(fake))
    err = capsys.readouterr().err
    assert err.count("WARNING") == 1 and "(nfs)" in err
    assert "postgresql://" in err and f"playground sweep serve {folder}" in err
    assert network_filesystem(str(folder)) is None   # this machine's own mounts: local
