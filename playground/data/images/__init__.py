"""Pixels: records decoded, augmented, collated into reused shared-memory batches, and the LMDB image Dataset.

    image_decode.py    record -> RGB (or gray) pixels with OpenCV
    augment.py         crops, resizing, mirror; random choices from (seed, pass, index)
    sample_seeds.py    those per-image generators, reseeded in place (numpy's seeding, computed directly)
    color_augment.py   brightness/contrast/saturation jitter and PCA lighting noise
    image_batch.py     collation into one preallocated uint8 batch, normalised on the training device
    batch_ring.py      a loader worker's reused shared-memory batches, each crossing to the trainer once
    gpu_decode.py      input.gpu_decode: JPEG records decoded and augmented on the CUDA device
    lmdb_dataset.py    the torch Dataset the input component hands to the framework
"""
