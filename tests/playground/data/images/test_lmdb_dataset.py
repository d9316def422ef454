"""The LMDB image dataset through the framework's samplers and loaders (playground/data/images/lmdb_dataset.py)."""
from __future__ import annotations

import itertools
import subprocess
import sys

import cv2
import numpy as np
import pytest
import torch

from playground.data.batch_stream import build_test_stream, build_train_stream
from playground.data.images.augment import AugmentSpec
from playground.data.records.db_records import RecordReadError
from playground.data.images.image_batch import IMAGENET_MEAN, IMAGENET_STD, SkippedRecord
from playground.data.images.lmdb_dataset import LmdbImageDataset
from playground.data.records.lmdb_writer import LmdbWriter
from playground.data.records.record_format import ImageRecord, pack_record, record_key
from playground.distribution.run_context import RunContext
from playground.distribution.topology import Topology
from tests.conftest import HANG, REPO
from tests.image_lmdbs import caffe_datums, class_color_image, corrupt_record, make_image_lmdb, write_caffe_lmdb

COUNT = 12
TRAIN = AugmentSpec(is_train=True, loadsize=20, imsize=16, scale_jitter_type=1, color_jitter=True, color_lighting=True)
TEST = AugmentSpec(is_train=False, loadsize=24, imsize=24)
IDENTITY = {"mean": [0.0, 0.0, 0.0], "std": [1 / 255] * 3}     # normalisation that leaves pixel values as they are


@pytest.fixture(scope="module")
def numbered_db(tmp_path_factory):
    """COUNT PNG records whose label is their index, so batches show which records they hold."""
    folder = tmp_path_factory.mktemp("numbered") / "db"
    writer = LmdbWriter(str(folder))
    for index in range(COUNT):
        png = cv2.imencode(".png", class_color_image(index % 3, index))[1].tobytes()
        writer.append(ImageRecord(label=index, payload=png, height=24, width=32, channels=3))
    writer.finish([str(i) for i in range(COUNT)])
    return str(folder)


def loader_opts(batch: int, workers: int = 0, method: str = "auto") -> dict:
    return {"epoch_iter": {"batch_per_device": batch, "num_train_sample_per_epoch": 0, "test_batch_per_device": None,
                           "num_test_sample": 0, "num_test_iter": 0},
            "model_param": {"seed": 7}, "input": {"shuffle_train": True, "decode_threads": workers,
                                                  "worker_start_method": method, "reuse_batch_memory": True}}


def context(world: int, rank: int) -> RunContext:
    topology = Topology("cpu", world, 1, 0, 0, "gloo" if world > 1 else None, "spawn" if world > 1 else "single")
    return RunContext(run_dir="unused", topology=topology, local_rank=rank)


def test_labels_pixels_and_bytes_round_trip(tmp_path):
    db = make_image_lmdb(tmp_path, classes=2, per_class=2)
    dataset = LmdbImageDataset(str(db), TEST, **IDENTITY)
    assert (len(dataset), dataset.num_classes, dataset.class_names, dataset.format) == (4, 2, ["class0", "class1"],
                                                                                      "playground")
    image, label = dataset[0]                                       # class0/img0.png, lossless
    source = cv2.cvtColor(cv2.imread(str(tmp_path / "db-images/class0/img0.png")), cv2.COLOR_BGR2RGB)
    assert label == 0 and image.shape == (3, 24, 24)
    assert torch.equal(image, torch.from_numpy(source[:, 4:28]).permute(2, 0, 1).float())
    assert [dataset[i][1] for i in range(4)] == [0, 0, 1, 1]
    assert dataset.records.read(1).payload == (tmp_path / "db-images/class0/img1.jpg").read_bytes()


@pytest.mark.parametrize("world", [1, 2, 3])
def test_rank_shards_are_disjoint_and_cover_the_set(numbered_db, world):
    dataset = LmdbImageDataset(numbered_db, TRAIN)
    batch = 2
    train = [build_train_stream(dataset, loader_opts(batch), context(world, r), COUNT // (batch * world))
             for r in range(world)]
    seen = [[int(x) for _ in range(COUNT // (batch * world)) for x in stream.next()[1]] for stream in train]
    assert sorted(itertools.chain(*seen)) == list(range(COUNT))
    test = [build_test_stream(dataset, loader_opts(5), context(world, r)) for r in range(world)]
    tested = []
    for stream in test:
        tested.append([int(x) for _ in range(stream.begin_full_pass()) for x in stream.next()[1]])
    assert sorted(itertools.chain(*tested)) == list(range(COUNT))
    assert all(not set(a) & set(b) for a, b in itertools.combinations(seen, 2))
    assert all(not set(a) & set(b) for a, b in itertools.combinations(tested, 2))


def test_augmentation_depends_only_on_seed_pass_and_index(numbered_db):
    first, again = LmdbImageDataset(numbered_db, TRAIN, seed=1), LmdbImageDataset(numbered_db, TRAIN, seed=1)
    sample = first.get_sample(5, 3).pixels
    assert np.array_equal(sample, again.get_sample(5, 3).pixels)
    assert not np.array_equal(sample, first.get_sample(5, 4).pixels)
    assert not np.array_equal(sample, LmdbImageDataset(numbered_db, TRAIN, seed=2).get_sample(5, 3).pixels)
    assert len({first.get_sample(5, p).pixels.tobytes() for p in range(8)}) == 8


def test_a_batch_holds_each_samples_own_augmentation_with_colour_noise_and_without(numbered_db):
    for spec in (TRAIN, AugmentSpec(is_train=True, loadsize=20, imsize=16, scale_jitter_type=0)):
        dataset = LmdbImageDataset(numbered_db, spec, seed=1)
        keys = [(3, 5), (0, 2), (7, 1)]
        batch = dataset.get_samples(keys)
        for slot, (data_pass, index) in zip(batch.images.numpy(), keys):
            assert np.array_equal(slot, dataset.get_sample(index, data_pass).pixels)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_loader_workers_give_the_batches_of_the_trainer_process(numbered_db, method):
    dataset = LmdbImageDataset(numbered_db, TRAIN)
    inline = build_train_stream(dataset, loader_opts(4), context(1, 0), COUNT // 4)
    workers = build_train_stream(dataset, loader_opts(4, workers=2, method=method), context(1, 0), COUNT // 4)
    try:
        held = None
        for _ in range(COUNT // 4 * 6):      # six passes: each worker's ring of reused buffers goes round
            (x0, y0), (x1, y1) = inline.next(), workers.next()
            assert torch.equal(y0, y1) and torch.equal(x0, x1)
            if held is not None:             # the batch the loop was on is intact until it takes the next one
                assert torch.equal(held[0], held[1])
            held = (x0, x1)
    finally:
        workers.close()             # the workers ignore SIGTERM: only close() (or their rank's exit) stops them


FORK_AFTER_OPENCV_THREADS = """
import sys, cv2, numpy as np
from playground.data.images.lmdb_dataset import LmdbImageDataset
from tests.playground.data.images.test_lmdb_dataset import TRAIN, context, loader_opts
from playground.data.batch_stream import build_train_stream
rng = np.random.default_rng(0)
for _ in range(30):                     # the trainer process uses OpenCV's thread pool before the loader forks
    image = rng.integers(0, 255, (375, 500, 3), dtype=np.uint8)
    cv2.imencode(".jpg", cv2.GaussianBlur(image, (0, 0), 1.5))
stream = build_train_stream(LmdbImageDataset(sys.argv[1], TRAIN), loader_opts(4, 2, "fork"), context(1, 0), 3)
stream.next(), stream.next()
stream.close()
print("batches arrived")
"""


def test_forked_workers_do_not_hang_when_the_parent_used_opencv_threads(numbered_db):
    process = subprocess.run([sys.executable, "-c", FORK_AFTER_OPENCV_THREADS, numbered_db], cwd=REPO,
                             capture_output=True, text=True, timeout=HANG)
    assert process.returncode == 0 and "batches arrived" in process.stdout, process.stderr


def test_a_corrupt_record_stops_with_db_and_key_or_is_skipped_and_counted(tmp_path):
    db = make_image_lmdb(tmp_path, classes=2, per_class=3)
    corrupt_record(db, record_key(4), pack_record(ImageRecord(label=1, payload=b"\xff\xd8\xff not a jpeg")))
    strict = LmdbImageDataset(str(db), TRAIN)
    with pytest.raises(RecordReadError, match=f"{db}: record '0000000004': OpenCV could not decode"):
        strict.get_sample(4, 0)
    lenient = LmdbImageDataset(str(db), TRAIN, bad_record="skip")
    assert isinstance(lenient.get_sample(4, 0), SkippedRecord)
    stream = build_train_stream(lenient, loader_opts(6), context(1, 0), 1)
    images, labels = stream.next()
    assert images.shape[0] == 5 and stream.skipped == 1


def test_caffe_databases_of_encoded_and_raw_datums_read_alike(tmp_path):
    db = write_caffe_lmdb(tmp_path / "caffe", caffe_datums(classes=2, per_class=2, size=(20, 28)))
    dataset = LmdbImageDataset(str(db), AugmentSpec(is_train=False, loadsize=20, imsize=20), **IDENTITY)
    assert (len(dataset), dataset.num_classes, dataset.format) == (4, None, "caffe")
    for index in range(4):                  # records 0, 2 hold PNG bytes; 1, 3 raw CxHxW BGR pixels
        image, label = dataset[index]
        bgr = class_color_image(index // 2, index % 2, (20, 28))
        rgb = torch.from_numpy(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)[:, 4:24]).permute(2, 0, 1).float()
        assert label == index // 2 and torch.equal(image, rgb)


def _pre_uint8_batch(dataset: LmdbImageDataset, keys: list[tuple[int, int]]) -> torch.Tensor:
    """The batch as the pipeline made it before batches travelled as uint8: each image cropped, resized and
    mirrored into new arrays, then converted and normalised per image into float32 NCHW."""
    from playground.data.images.augment import inception_box, random_crop, resize, resize_shorter, sample_rng
    from playground.data.images.image_decode import decode_pixels

    spec, images = dataset.spec, []
    std = torch.tensor(IMAGENET_STD).view(3, 1, 1)
    scale, offset = 1.0 / (255.0 * std), -torch.tensor(IMAGENET_MEAN).view(3, 1, 1) / std
    for data_pass, index in keys:
        pixels, rng = decode_pixels(dataset.records.read(index), 3), sample_rng(dataset.seed, data_pass, index)
        if spec.scale_jitter_type == 1:
            y, x, h, w = inception_box(pixels.shape[0], pixels.shape[1], rng)
            out = resize(pixels[y:y + h, x:x + w], spec.imsize, spec.imsize)
        else:
            out = random_crop(resize_shorter(pixels, spec.loadsize), spec.imsize, rng)
        if rng.random() < 0.5:
            out = cv2.flip(out, 1)
        image = torch.empty(3, spec.imsize, spec.imsize)
        torch.addcmul(offset, torch.from_numpy(np.ascontiguousarray(out)).permute(2, 0, 1), scale, out=image)
        images.append(image)
    return torch.stack(images)


@pytest.mark.parametrize("jitter", [0, 1])
@pytest.mark.parametrize("header_size", ["absent", "true", "wrong"])
def test_seeded_batches_equal_the_float32_per_image_pipeline_up_to_rounding(tmp_path, jitter, header_size):
    """Whether a record's header gives its image's size (crops drawn before decoding), gives none, or gives a
    wrong one (drawn again from the decoded size), the batches are the per-image pipeline's."""
    rng = np.random.default_rng(jitter)
    writer = LmdbWriter(str(tmp_path / "db"))
    for index in range(10):
        photo = cv2.GaussianBlur(rng.integers(0, 256, (48 + 4 * index, 80 - 2 * index, 3), np.uint8), (5, 5), 1.5)
        height, width = {"absent": (0, 0), "true": photo.shape[:2], "wrong": photo.shape[1::-1]}[header_size]
        writer.append(ImageRecord(label=index, payload=cv2.imencode(".jpg", photo)[1].tobytes(), height=height,
                                  width=width, channels=3))
    writer.finish([str(i) for i in range(10)])
    spec = AugmentSpec(is_train=True, loadsize=40, imsize=24, scale_jitter_type=jitter)
    dataset = LmdbImageDataset(str(tmp_path / "db"), spec, seed=7)
    iterations = 10 // 4
    stream = build_train_stream(dataset, loader_opts(4, workers=1, method="fork"), context(1, 0), iterations)
    try:
        for step in range(5):       # across a pass boundary, through a worker's reused shared uint8 buffers
            images, labels = stream.next()
            keys = stream.sampler.keys(step)
            assert labels.tolist() == [index for _, index in keys]
            assert images.dtype == torch.float32 and images.is_contiguous()
            assert torch.allclose(images, _pre_uint8_batch(dataset, keys), rtol=0, atol=1e-6)
    finally:
        stream.close()


def test_a_stream_restored_at_a_position_gives_the_uninterrupted_streams_batches_bit_for_bit(numbered_db):
    dataset = LmdbImageDataset(numbered_db, TRAIN, seed=7)
    opts = loader_opts(5, workers=1, method="fork")
    whole = build_train_stream(dataset, opts, context(1, 0), 2)
    resumed = build_train_stream(LmdbImageDataset(numbered_db, TRAIN, seed=7), opts, context(1, 0), 2)
    try:
        expected = [tuple(t.clone() for t in whole.next()) for _ in range(5)]
        state = {"position": 3}
        resumed.load_state_dict(state)
        for images, labels in expected[3:]:
            got_images, got_labels = resumed.next()
            assert torch.equal(got_labels, labels) and torch.equal(got_images, images)
        assert resumed.state_dict() == {"position": 5}
    finally:
        whole.close()
        resumed.close()
