"""playground: a parameter-driven experiment playground for PyTorch (Caffe2's Playground, rebuilt).

Importing this package is cheap; heavy modules (torch, cv2, matplotlib) are imported where they are used.
"""
__version__ = "0.1.0"
