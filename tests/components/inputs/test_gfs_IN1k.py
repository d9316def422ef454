"""The gfs_IN1k input component: real short runs from make-lmdb and Caffe databases, and its opts checks."""
from __future__ import annotations

import json

import pytest
import torch

from playground.api import prepare_opts, run
from playground.data.records.db_records import RecordReadError
from playground.data.records.record_format import ImageRecord, pack_record, record_key
from playground.options.layers import OptsError
from tests.conftest import tiny_opts
from tests.image_lmdbs import caffe_datums, corrupt_record, make_image_lmdb, write_caffe_lmdb


def image_opts(train: str, test: str = "", **input_keys) -> dict:
    """The tiny run on LMDB images: 16x16 crops, one epoch of 3 iterations of 8."""
    opts = tiny_opts(epoch_iter={"num_train_sample_per_epoch": 24, "num_epochs": 1, "batch_per_device": 8,
                                 "num_train_iteration_per_test": 3, "num_test_iter": 1})
    for key in ("synthetic_shape", "synthetic_train_size", "synthetic_test_size"):
        del opts["input"][key]
    opts["input"].update(input_name_py="gfs_IN1k", train_input_path=train, test_input_path=test, num_classes=None,
                         loadsize=20, imsize=16, scale_jitter_type=1, color_jitter=True, color_lighting=True)
    opts["input"].update(input_keys)
    return opts


def test_a_make_lmdb_image_folder_trains_with_classes_from_the_metadata(tmp_path):
    db = make_image_lmdb(tmp_path, classes=3, per_class=10, test_fraction=0.3)
    result = run(image_opts(str(db / "train"), str(db / "test")), run_dir=str(tmp_path / "run"))
    resolved = json.loads((tmp_path / "run" / "opts.json").read_text())["opts"]["input"]
    assert resolved["channels"] == 3 and resolved["bad_record"] == "error"
    metrics = result["metrics"]
    assert metrics["epochs"][-1] == 1.0 and all(0 <= a <= 1 for a in metrics["test_accuracy_top1"])
    assert len(metrics["train_loss"]) == 2 and metrics["train_loss"][0] > 0


def test_a_caffe_datum_lmdb_trains_in_gray_through_forked_workers(tmp_path):
    db = write_caffe_lmdb(tmp_path / "caffe", caffe_datums(classes=3, per_class=8))
    opts = image_opts(str(db), str(db), num_classes=3, channels=1, mean=[0.45], std=[0.25], decode_threads=2,
                      worker_start_method="fork")
    opts["model"]["forward_pass_py"] = "mlp_forward"
    result = run(opts, run_dir=str(tmp_path / "run"))
    assert result["metrics"]["epochs"][-1] == 1.0 and result["metrics"]["test_loss"][-1] > 0


def test_corrupt_records_stop_the_run_or_are_skipped_and_reported(tmp_path, caplog):
    db = make_image_lmdb(tmp_path, classes=2, per_class=12)
    for index in (0, 3):    # record 0 too: the network is sized without decoding it (dataset.sample_shape)
        corrupt_record(db, record_key(index), pack_record(ImageRecord(label=0, payload=b"\x89PNG\r\n\x1a\n cut")))
    with pytest.raises(RecordReadError, match=f"{db}: record '000000000[03]': OpenCV could not decode"):
        run(image_opts(str(db)), run_dir=str(tmp_path / "strict"))
    result = run(image_opts(str(db), bad_record="skip"), run_dir=str(tmp_path / "lenient"))
    assert result["metrics"]["epochs"][-1] == 1.0
    log = (tmp_path / "lenient" / "train.log").read_text()
    assert "epoch 1: skipped 2 corrupt record(s) (input.bad_record is 'skip')" in log


def test_paths_and_settings_are_checked_before_anything_starts(tmp_path):
    db = make_image_lmdb(tmp_path, classes=2, per_class=2)
    caffe = write_caffe_lmdb(tmp_path / "caffe", caffe_datums(classes=2, per_class=1))
    cases = [
        (image_opts(str(tmp_path / "missing")), "opts.input.train_input_path: " + str(tmp_path / "missing") +
         " does not exist"),
        (image_opts(str(db), str(tmp_path)), f"opts.input.test_input_path: {tmp_path} is not an LMDB"),
        (image_opts(str(caffe)), "opts.input.num_classes: " + str(caffe) + " holds Caffe Datum records"),
        (image_opts(str(db), num_classes=1), "opts.input.num_classes: 1, but " + str(db) + " has 2 classes"),
        (image_opts(str(db), loadsize=8), "opts.input.loadsize: 8 is smaller than input.imsize (16)"),
        (image_opts(str(db), channels=1), "opts.input.mean: 3 values for input.channels 1"),
        (image_opts(str(db), bad_record="ignore"), "opts.input.bad_record"),
        (image_opts(""), "opts.input.train_input_path"),
        (image_opts(str(db), gpu_decode=True), "opts.input.gpu_decode: true, but "),
    ]
    for opts, message in cases:
        with pytest.raises(OptsError) as caught:
            prepare_opts(opts, run_dir=str(tmp_path / "never"))
        assert message in str(caught.value)
    assert not (tmp_path / "never").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without a CUDA device")
def test_gpu_decode_is_refused_without_a_cuda_device(tmp_path):
    db = make_image_lmdb(tmp_path, classes=2, per_class=2)
    opts = image_opts(str(db), gpu_decode=True, color_jitter=False, color_lighting=False)
    opts["distributed"]["num_gpus"] = 0
    with pytest.raises(OptsError, match="opts.input.gpu_decode: true, but no CUDA device is available; JPEGs can "
                                        "only be decoded on a CUDA device"):
        prepare_opts(opts, run_dir=str(tmp_path / "never"))


def test_a_caffe_label_outside_num_classes_names_database_record_and_key(tmp_path):
    from playground.data.images.lmdb_dataset import LabelError
    db = write_caffe_lmdb(tmp_path / "caffe", caffe_datums(classes=3, per_class=4))
    opts = image_opts(str(db), num_classes=2, bad_record="skip")   # a wrong class count is never skipped
    with pytest.raises(LabelError, match=rf"^{db}: record \d+ \(key '[^']+'\) has label 2, outside input.num_classes "
                                         r"\(2; labels are 0 to 1\)"):
        run(opts, run_dir=str(tmp_path / "run"))
