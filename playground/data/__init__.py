"""The data a run reads: the batch stream over any common form of dataset, and image datasets in LMDB.

    batch_stream.py    this rank's batches: a resumable training stream and a test stream over DataLoaders
    forms.py           the forms of data a component or trial may give, adapted for the batch stream
    form_check.py      before any rank starts: the data is in a form the batch stream can read
    iterable_shards.py this rank's and loader worker's share of an iterable dataset
    worker_errors.py   errors in the data, and the original error behind a DataLoader worker's re-raised one
    records/           image LMDB files: the record format, Caffe Datum records, reading and writing databases
    images/            pixels: decoding, augmentation, batching into shared memory, the LMDB image Dataset

Layers: records/ knows only worker_errors.py; images/ reads records/; nothing here imports images/ or records/
but the image Dataset itself. Nothing in data/ knows the trainer.
"""
