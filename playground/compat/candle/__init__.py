"""candle_lib's API, the part CANDLE's PyTorch benchmarks use, on playground: what `import candle` gives a
script that `playground candle` runs when no other `candle` module can be imported (playground/candle/
script_process.py puts a finder for `on_path/` at the end of sys.meta_path). docs/candle.md has the table of
members.

The signatures and results are candle_lib's; what differs is said where it is implemented: `_parameters.py`
(the command line and the defaults file), `_helpers.py` (data files are looked up locally, never downloaded),
`_checkpoint.py` (checkpoints are playground's files), `_pytorch.py`, `_scaling.py`, `_labels.py`,
`_loaders.py` and `_csv_data.py` (the data utilities; pandas is imported when a loader runs). A member not
provided raises CandleMemberMissing, which names it.
"""
from __future__ import annotations

from playground.compat.candle._checkpoint import CandleCkptPyTorch, restart
from playground.compat.candle._common import str2bool
from playground.compat.candle._csv_data import load_csv_data
from playground.compat.candle._errors import CandleDataMissing, CandleMemberMissing
from playground.compat.candle._helpers import (fetch_file, get_file, keras_default_config, set_parallelism_threads,
                                               set_seed, set_up_logger, validate_file, verify_path)
from playground.compat.candle._labels import (convert_to_class, discretize_array, discretize_dataframe, lookup,
                                              to_categorical)
from playground.compat.candle._loaders import (load_X_data, load_X_data2, load_Xy_data2, load_Xy_data_noheader,
                                               load_Xy_one_hot_data, load_Xy_one_hot_data2)
from playground.compat.candle._parameters import ArgumentStruct, Benchmark, check_flag_conflicts, finalize_parameters
from playground.compat.candle._pytorch import (build_activation, build_optimizer, build_pytorch_activation,
                                               build_pytorch_optimizer, get_function, get_pytorch_function,
                                               initialize, mse, pytorch_initialize, pytorch_mse, pytorch_xent,
                                               set_pytorch_seed, set_pytorch_threads, xent)
from playground.compat.candle._scaling import drop_impute_and_scale_dataframe, impute_and_scale_array, scale_array

name = "candle"
__version__ = "0.0.1+playground"

__all__ = ["ArgumentStruct", "Benchmark", "CandleCkptPyTorch", "build_activation", "build_optimizer",
           "build_pytorch_activation", "build_pytorch_optimizer", "check_flag_conflicts", "convert_to_class",
           "discretize_array", "discretize_dataframe", "drop_impute_and_scale_dataframe", "fetch_file",
           "finalize_parameters", "get_file", "get_function", "get_pytorch_function", "impute_and_scale_array",
           "initialize", "keras_default_config", "load_X_data", "load_X_data2", "load_Xy_data2",
           "load_Xy_data_noheader", "load_Xy_one_hot_data", "load_Xy_one_hot_data2", "load_csv_data", "lookup",
           "mse", "pytorch_initialize", "pytorch_mse", "pytorch_xent", "restart", "scale_array",
           "set_parallelism_threads", "set_pytorch_seed", "set_pytorch_threads", "set_seed", "set_up_logger",
           "str2bool", "to_categorical", "validate_file", "verify_path", "xent"]


def __getattr__(attribute: str):
    if attribute.startswith("__"):      # import machinery and introspection probing (__path__, __file__, ...)
        raise AttributeError(f"module 'candle' has no attribute {attribute!r}")
    raise CandleMemberMissing(f"candle.{attribute}: playground's candle (used because no other `candle` module "
                              "could be imported) does not provide it; put candle_lib or your own `candle` on "
                              "the script's path (docs/candle.md lists what playground's provides)")
