"""The one reader of the files a user gives the product: opts JSON, INI defaults files, sweep specs, upf files,
restart CSVs, mlrMBO parameter sets, Determined experiment YAMLs, module maps, parameter files, make-lmdb lists.

Every problem is one line that starts with where the file was named (`origin`: `--parameters-file x.json`, or
the path) and ends the command with exit 2 before anything starts: a file that cannot be opened, is empty, is
larger than the bound (MAX_MIB_ENV), is binary (a NUL byte: its offset), is UTF-16/32 or is not UTF-8 (the byte
offset and line of the first byte that is not). A leading UTF-8 byte-order mark is dropped. JSON and YAML parse
errors name the line and column; YAML is safe-loaded and refused when its aliases would expand it past
MAX_YAML_VALUES values (a "billion laughs" file) or make it refer to itself. The caller names the error class
(its own UserError subclass, e.g. OptsError or SweepError), so its callers catch what they always caught.
"""
from __future__ import annotations

import configparser
import json
import os
from typing import Any, Callable

from playground.processes.exit_codes import UserError

MAX_MIB_ENV = "PLAYGROUND_MAX_INPUT_MIB"
DEFAULT_MAX_MIB = 8            # far above any opts, spec, upf or experiment file; a 56 MB YAML took 96 s and 2.2 GB
MAX_YAML_VALUES = 1_000_000    # values (scalars, lists, mappings) a YAML document may hold once aliases are expanded
_UTF16_32_MARKS = {b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32", b"\xff\xfe": "UTF-16",
                   b"\xfe\xff": "UTF-16"}


class UserFileError(UserError, ValueError):
    """A file the user gave cannot be used; the message names it."""


ErrorClass = Callable[[str], Exception]


def max_bytes() -> int:
    """The largest file a user may give, in bytes: MAX_MIB_ENV (MiB) when set to a positive number, else 8 MiB."""
    text = os.environ.get(MAX_MIB_ENV, "").strip()
    try:
        mib = float(text) if text else DEFAULT_MAX_MIB
    except ValueError:
        mib = DEFAULT_MAX_MIB
    return int((mib if mib > 0 else DEFAULT_MAX_MIB) * 2**20)


def read_text(path: str, what: str, origin: str | None = None, error: ErrorClass = UserFileError) -> str:
    """The file's text; `what` names it in a message ("the sweep spec"), `origin` says where it was given."""
    origin = origin or path
    limit = max_bytes()
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                raise error(_too_large(origin, what, size, limit))
            data = handle.read(limit + 1)        # a pipe or a device has no size: read one byte past the bound
    except OSError as err:
        raise error(f"{origin}: cannot read {what}: {err.strerror or err}") from None
    if len(data) > limit:
        raise error(_too_large(origin, what, len(data), limit))
    return decode(data, what, origin, error)


def decode(data: bytes, what: str, origin: str, error: ErrorClass = UserFileError) -> str:
    """`data` as UTF-8 text (a leading byte-order mark dropped); empty, binary and other encodings refused."""
    if not data:
        raise error(f"{origin}: {what} is empty (0 bytes)")
    for mark, name in _UTF16_32_MARKS.items():
        if data.startswith(mark):
            raise error(f"{origin}: {what} is {name} text (byte-order mark 0x{mark.hex().upper()} at byte offset "
                        "0); save it as UTF-8")
    nul = data.find(b"\0")
    if nul >= 0:
        raise error(f"{origin}: {what} is a binary file, not text (a NUL byte at byte offset {nul}{_line(data, nul)})")
    skip = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = skip + err.start
        raise error(f"{origin}: {what} is not UTF-8 text: byte 0x{data[offset]:02X} at byte offset {offset}"
                    f"{_line(data, offset)} ({err.reason}); save it as UTF-8") from None


def read_json(path: str, what: str, origin: str | None = None, error: ErrorClass = UserFileError) -> Any:
    """The file's JSON value; malformed JSON names its line and column."""
    origin = origin or path
    return parse_json(read_text(path, what, origin, error), what, origin, error)


def parse_json(text: str, what: str, origin: str, error: ErrorClass = UserFileError) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise error(f"{origin}: malformed JSON at line {err.lineno}, column {err.colno}: {err.msg}") from None
    except RecursionError:
        raise error(f"{origin}: {what} nests lists or objects too deeply to read") from None


def read_yaml(path: str, what: str, origin: str | None = None, error: ErrorClass = UserFileError) -> tuple[Any, str]:
    """(the file's YAML document, its text), safe-loaded with the bound on alias expansion."""
    origin = origin or path
    text = read_text(path, what, origin, error)
    return parse_yaml(text, what, origin, error), text


def parse_yaml(text: str, what: str, origin: str, error: ErrorClass = UserFileError) -> Any:
    """One YAML document from `text`: plain data only (safe loading), refused when its aliases would expand it
    past MAX_YAML_VALUES values or make it contain itself; syntax errors name their line and column."""
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = _expansion_problem(node)
        if problem:
            raise error(f"{origin}: {what}: {problem}")
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise error(f"{origin}{where}: not valid YAML: {err.problem or err.context}") from None
    except yaml.YAMLError as err:
        raise error(f"{origin}: not valid YAML: {err}") from None
    except RecursionError:
        raise error(f"{origin}: {what} nests lists or mappings too deeply to read") from None
    finally:
        loader.dispose()


def read_ini(path: str, what: str, origin: str | None = None, error: ErrorClass = UserFileError,
             strict: bool = True) -> configparser.ConfigParser:
    """The parsed INI file (keys keep their case, no interpolation); a malformed one is one error."""
    origin = origin or path
    parser = configparser.ConfigParser(interpolation=None, strict=strict)
    parser.optionxform = str  # type: ignore[assignment, method-assign]  # keep key case
    try:
        parser.read_string(read_text(path, what, origin, error), source=path)
    except configparser.Error as err:
        raise error(f"{origin}: not a valid INI file: {' '.join(str(err).split())}") from None
    return parser


def _too_large(origin: str, what: str, size: int, limit: int) -> str:
    return (f"{origin}: {what} is {size / 2**20:.1f} MiB, over the {limit / 2**20:g} MiB a file given to "
            f"playground may hold (set {MAX_MIB_ENV} to allow more)")


def _line(data: bytes, offset: int) -> str:
    newline = b"\n"
    return f", line {data.count(newline, 0, offset) + 1}"


def _expansion_problem(root: Any) -> str | None:
    """Why the composed YAML `root` may not be constructed: more than MAX_YAML_VALUES values once every alias is
    expanded, or an alias inside the node it names; None when it may. Counted once per distinct node."""
    import yaml
    sizes: dict[int, int] = {}
    begun: set[int] = set()      # nodes whose children are being counted: the path from the root
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        children = ([part for pair in node.value for part in pair] if isinstance(node, yaml.MappingNode)
                    else node.value if isinstance(node, yaml.SequenceNode) else [])
        if done:
            begun.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[id(node)] > MAX_YAML_VALUES:
                return (f"its aliases expand it past {MAX_YAML_VALUES:,} values (at line {node.start_mark.line + 1}; "
                        "an alias bomb?); write the values out, or use fewer nested aliases")
            continue
        if id(node) in sizes:
            continue
        begun.add(id(node))
        stack.append((node, True))
        for child in children:
            if id(child) in begun:
                return (f"an alias at line {child.start_mark.line + 1} names a node that contains it, so the "
                        "document would contain itself")
            if id(child) not in sizes:
                stack.append((child, False))
    return None
