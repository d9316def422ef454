"""What a sweep reports: summary.csv, summary.md, best.json, CANDLE's output.csv and each trial's result.txt
(`summary.py`, one writer, rewritten whole), and the PNGs of `sweep plots` (`plots.py`).

Reads the study and the run folders; imports `search`, `files`, `inputs`, nothing above (the agents write the
summary when a sweep ends).
"""
