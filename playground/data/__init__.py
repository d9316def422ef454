"""Image datasets in LMDB: the record format, building databases, reading them fast and safely.

    record_format.py   the bytes of one record and of the metadata record (what docs/data.md documents)
    caffe_datum.py     reading Caffe `Datum` records (convert_imageset) without protobuf
    db_records.py      opening an LMDB read-only and telling our format from Caffe's
    image_sources.py   what make-lmdb reads: a class-per-folder tree, a list file, scikit-learn's digits
    lmdb_writer.py     writing a database into a temporary folder that is renamed when complete
    lmdb_build.py      make-lmdb's work: sources -> split -> checked records -> databases
    image_decode.py    record -> RGB (or gray) pixels with OpenCV
    augment.py         crops, resizing, mirror; random choices from (seed, pass, index)
    sample_seeds.py    those per-image generators, reseeded in place (numpy's seeding, computed directly)
    color_augment.py   brightness/contrast/saturation jitter and PCA lighting noise
    image_batch.py     collation into one preallocated uint8 batch, normalised on the training device
    batch_ring.py      a loader worker's reused shared-memory batches, each crossing to the trainer once
    lmdb_dataset.py    the torch Dataset the input component hands to the framework
"""
