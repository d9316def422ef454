"""Image LMDB files: the bytes of a record, Caffe's Datum records, reading a database, writing and building one.

    record_format.py   the bytes of one record and of the metadata record (what docs/data.md documents)
    caffe_datum.py     reading Caffe `Datum` records (convert_imageset) without protobuf
    db_records.py      opening an LMDB read-only and telling our format from Caffe's
    image_sources.py   what make-lmdb reads: a class-per-folder tree, a list file, scikit-learn's digits
    lmdb_writer.py     writing a database into a temporary folder that is renamed when complete
    lmdb_build.py      make-lmdb's work: sources -> split -> checked records -> databases

Plain bytes only: no pickle, no pixels (decoding is images/).
"""
