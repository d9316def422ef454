"""`playground make-lmdb`: the three sources, the split layout, and builds that never leave half a database."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from playground.cli import main
from playground.data.records.db_records import DbRecords
from tests.conftest import HANG, REPO
from tests.image_lmdbs import write_image_tree


def test_a_class_folder_tree_becomes_one_lmdb(tmp_path, capsys):
    tree = write_image_tree(tmp_path / "images", classes=3, per_class=4)
    handler = signal.getsignal(signal.SIGTERM)
    assert main(["make-lmdb", str(tree), str(tmp_path / "db"), "--no-progress"]) == 0
    assert signal.getsignal(signal.SIGTERM) is handler      # run inside another program, it leaves no trace
    assert f"{tmp_path / 'db'}: 12 images, 3 classes" in capsys.readouterr().out
    records = DbRecords(str(tmp_path / "db"))
    assert records.class_names == ["class0", "class1", "class2"]
    assert [records.read(i).label for i in range(12)] == [0] * 4 + [1] * 4 + [2] * 4
    assert records.read(5).payload == (tree / "class1" / "img1.jpg").read_bytes()
    assert records.meta["source"] == f"folder {tree}"


def test_a_list_file_and_a_split_give_train_and_test_folders(tmp_path, capsys):
    tree = write_image_tree(tmp_path / "images", classes=2, per_class=5)
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"class{c}/img{i}.{'png' if i % 2 == 0 else 'jpg'} {c}\n"
                               for c in range(2) for i in range(5)))
    out = tmp_path / "split"
    code = main(["make-lmdb", str(tree), str(out), "--list", str(listing), "--test-fraction", "0.4", "--seed", "3",
                 "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert f"--set input.train_input_path={out}/train --set input.test_input_path={out}/test" in printed
    assert sorted(os.listdir(out)) == ["test", "train"]
    train, test = DbRecords(str(out / "train")), DbRecords(str(out / "test"))
    assert (train.count, test.count) == (6, 4) and test.meta["split"] == "test" and test.meta["seed"] == 3
    sources = {train.read(i).extra["source"] for i in range(6)} | {test.read(i).extra["source"] for i in range(4)}
    assert len(sources) == 10


def test_the_digits_build_into_the_demo_layout(tmp_path, capsys):
    assert main(["make-lmdb", "--digits", str(tmp_path / "digits"), "--test-fraction", "0.2", "--no-progress"]) == 0
    train, test = DbRecords(str(tmp_path / "digits" / "train")), DbRecords(str(tmp_path / "digits" / "test"))
    assert train.count + test.count == 1797 and 350 <= test.count <= 370
    assert train.class_names == [str(d) for d in range(10)]


@pytest.mark.parametrize("arguments, message", [
    (["--digits", "a", "b"], "--digits takes only OUTPUT"),
    (["only-output"], "give SOURCE and OUTPUT"),
    (["src", "out", "--test-fraction", "1.5"], "--test-fraction must be at least 0 and below 1"),
])
def test_unusable_command_lines_exit_2(arguments, message, capsys):
    assert main(["make-lmdb", *arguments]) == 2
    assert message in capsys.readouterr().err


def test_an_unreadable_image_or_an_existing_output_exit_2_and_write_nothing(tmp_path, capsys):
    tree = write_image_tree(tmp_path / "images", classes=2, per_class=2)
    (tree / "class1" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    assert main(["make-lmdb", str(tree), str(tmp_path / "db"), "--no-progress"]) == 2
    assert "class1/broken.png: not a readable image" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["images"]
    (tmp_path / "db").mkdir()
    assert main(["make-lmdb", str(tree), str(tmp_path / "db"), "--no-progress"]) == 2
    assert "already exists; choose another path or pass --overwrite" in capsys.readouterr().err


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_build_killed_midway_leaves_no_database_at_the_target(tmp_path, sig):
    tree = write_image_tree(tmp_path / "images", classes=2, per_class=3)
    os.mkfifo(tree / "class1" / "zz_stuck.png")       # reading it blocks: the build stops midway, mid-write
    output = tmp_path / "db"
    process = subprocess.Popen([sys.executable, "-m", "playground.cli", "make-lmdb", str(tree), str(output),
                                "--no-progress"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + HANG
    while not any(p.name.startswith(".db.incomplete-") and (p / "data.mdb").exists() for p in tmp_path.iterdir()):
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.05)
    time.sleep(0.2)
    process.send_signal(sig)
    code = process.wait(timeout=HANG)
    assert not output.exists()
    if sig == signal.SIGTERM:      # an orderly stop also removes the unfinished build
        assert code == 130 and "interrupted; nothing was written" in process.stderr.read().decode()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["images"]
