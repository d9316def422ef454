"""Images and labels from LMDB databases (playground's make-lmdb format or Caffe Datum), augmented with OpenCV.

The original Playground's ImageNet input, by its original name. input.train_input_path (required) and
input.test_input_path (optional; empty: no test set) are LMDB folders, e.g. the OUT/train and OUT/test that
`playground make-lmdb --test-fraction 0.2 ... OUT` writes. Training images get the augmentation of
input.scale_jitter_type, mirror, color_jitter and color_lighting; test images a shorter-side resize to
input.loadsize and a centre crop of input.imsize. Batches travel as uint8 and reach the network as float32
NxCxHxW, RGB, normalised on its device with input.mean and input.std (ImageNet's by default); with
input.gpu_decode, JPEGs are decoded on the GPU. The number of classes comes from the database's metadata
when input.num_classes is null. See docs/data.md.
"""
from __future__ import annotations

from playground.api import Float, IMAGENET_MEAN, IMAGENET_STD, ListOf

# Framework keys this component reads (docs/opts.md lists it as their reader).
reads = ["input.train_input_path",
         "input.test_input_path",
         "input.imsize",
         "input.loadsize",
         "input.num_classes",
         "input.scale_jitter_type",
         "input.color_jitter",
         "input.color_lighting"]

additional_definitions = [
    {"name": "input.channels", "type": int, "choices": [1, 3], "default": 3,
     "help": "Channels the network takes: 3 (RGB; gray images are repeated) or 1 (gray; colour is converted)."},
    {"name": "input.mirror", "type": bool, "default": True,
     "help": "Mirror training images left-right with probability 1/2."},
    {"name": "input.mean", "type": ListOf(Float(), min_items=1), "default": list(IMAGENET_MEAN),
     "help": "Per-channel mean (RGB order, pixel values scaled to [0, 1]) subtracted from every image."},
    {"name": "input.std", "type": ListOf(Float(0, exclusive_minimum=True), min_items=1), "default": list(IMAGENET_STD),
     "help": "Per-channel standard deviation (RGB order, [0, 1] scale) each image is divided by."},
    {"name": "input.gpu_decode", "type": bool, "default": False,
     "help": "Decode JPEG records on the CUDA device (torchvision's GPU decoder) and crop, resize and mirror them "
             "there; loader workers only read records. Needs distributed.num_gpus > 0; not with color_jitter, "
             "color_lighting or bad_record skip."},
    {"name": "input.bad_record", "type": str, "choices": ["error", "skip"], "default": "error",
     "help": "A record that cannot be decoded: error stops the run naming the database and key; skip leaves it "
             "out of its batch and reports the count at the end of each epoch."},
]
required = ["input.train_input_path"]


def validate_opts(opts: dict) -> list[str]:
    """Each path is a readable image LMDB; the class count is known; the sizes and normalisation fit."""
    from playground.api import CAFFE, DatabaseError, DbRecords

    i, problems = opts["input"], []
    for key in ("train_input_path", "test_input_path"):
        if not i[key] and key == "test_input_path":
            continue
        try:
            records = DbRecords(i[key])
        except DatabaseError as err:
            problems.append(f"opts.input.{key}: {err}")
            continue
        if records.kind == CAFFE and i["num_classes"] is None and key == "train_input_path":
            problems.append(f"opts.input.num_classes: {i[key]} holds Caffe Datum records, which do not say how many "
                            "classes there are; set input.num_classes")
        elif records.kind != CAFFE and i["num_classes"] is not None and i["num_classes"] < len(records.class_names):
            problems.append(f"opts.input.num_classes: {i['num_classes']}, but {i[key]} has "
                            f"{len(records.class_names)} classes; set it to null to take the database's count")
    if i["loadsize"] < i["imsize"]:
        problems.append(f"opts.input.loadsize: {i['loadsize']} is smaller than input.imsize ({i['imsize']}); images "
                        "are resized so the shorter side is loadsize, then cropped to imsize")
    problems += _gpu_decode_problems(opts)
    for key in ("mean", "std"):
        if len(i[key]) != i["channels"]:
            problems.append(f"opts.input.{key}: {len(i[key])} values for input.channels {i['channels']}; give one "
                            "value per channel")
    return problems


def dataset_sizes(opts: dict) -> dict[str, int]:
    """Records per database, from its metadata (no image is read); called after validate_opts found them usable."""
    from playground.api import DbRecords

    sizes = {}
    for split, key in (("train", "train_input_path"), ("test", "test_input_path")):
        if opts["input"][key]:
            records = DbRecords(opts["input"][key])
            try:
                sizes[split] = records.count
            finally:
                records.close()
    return sizes


def _gpu_decode_problems(opts: dict) -> list[str]:
    i = opts["input"]
    if not i["gpu_decode"]:
        return []
    import torch

    if opts["distributed"]["num_gpus"] == 0 or not torch.cuda.is_available():
        why = "no CUDA device is available" if not torch.cuda.is_available() else "distributed.num_gpus is 0"
        return [f"opts.input.gpu_decode: true, but {why}; JPEGs can only be decoded on a CUDA device that trains "
                "(set input.gpu_decode to false to decode with OpenCV in the loader workers)"]
    unsupported = [f"input.{key}" for key in ("color_jitter", "color_lighting") if i[key]]
    unsupported += ["input.bad_record skip"] if i["bad_record"] == "skip" else []
    if unsupported:
        return [f"opts.input.gpu_decode: GPU decoding does not do {', '.join(unsupported)}; turn those off or set "
                "input.gpu_decode to false"]
    return []


def get_input_dataset(opts: dict) -> dict:
    """{"train": LmdbImageDataset, "test": LmdbImageDataset or None}."""
    i = opts["input"]
    test = _dataset(opts, i["test_input_path"], is_train=False) if i["test_input_path"] else None
    return {"train": _dataset(opts, i["train_input_path"], is_train=True), "test": test}


def gen_input_builder_fun(self, model, dataset, is_train):
    return dataset


def _dataset(opts: dict, path: str, is_train: bool):
    from playground.api import AugmentSpec, LmdbImageDataset

    i = opts["input"]
    spec = AugmentSpec(is_train=is_train, loadsize=i["loadsize"], imsize=i["imsize"],
                       scale_jitter_type=i["scale_jitter_type"], mirror=i["mirror"], color_jitter=i["color_jitter"],
                       color_lighting=i["color_lighting"])
    return LmdbImageDataset(path, spec, channels=i["channels"], mean=i["mean"], std=i["std"],
                            seed=opts["model_param"]["seed"], bad_record=i["bad_record"],
                            label_limit=i["num_classes"], gpu_decode=i["gpu_decode"])
