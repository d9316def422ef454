"""What playground's `candle` cannot do, as user errors: `playground candle` prints each as one line (no
traceback) and the run exits 1; raised while the script is imported, the command exits 2 before anything runs."""
from __future__ import annotations

from playground.processes.exit_codes import UserError


class CandleDataMissing(UserError, FileNotFoundError):
    """A data file is neither in $CANDLE_DATA_DIR nor where candle_lib caches it; playground never downloads."""


class CandleMemberMissing(UserError, AttributeError):
    """The script uses a member of candle_lib's API that playground's `candle` does not provide."""
