"""Supervisor's mlrMBO parameter-set files (R, ParamHelpers) read as a search space, without R.

    param.set <- makeParamSet(
      makeDiscreteParam("model", values = c("ae", "vae")),
      makeDiscreteParam("drop", c(0.0, 0.1)),                  # values given by position
      makeIntegerParam("latent_dim", lower = 1, upper = 9, trafo = function(x) 2L^x),
      makeNumericParam("learning_rate", lower = -5, upper = -1, trafo = function(x) 10^x),
      makeLogicalParam("residual")
    )

gives the spec's `space` mapping (playground/sweeps space.py types, keyed by the benchmark's own param names):
a discrete or logical param is `categorical`; an integer param `int`; a numeric param `double`; with
`trafo = function(x) B^x` a numeric param is `log` with base B over the same bounds, and an integer param the
`categorical` of B^lower ... B^upper (the values mlrMBO can propose). A discrete param's values in CANDLE's
list form ("1500 500") are checked here as CANDLE splits them (playground/candle/list_values.py). `default`
and `tunable = TRUE` are accepted and change nothing. Comments (`#`) are skipped; the file holds one
`makeParamSet(...)`, assigned to a name or not. Anything else (another function, argument or trafo, a
parameter named twice) is a SweepError naming the file and line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from playground.candle.list_values import ListValueError, split_candle_list
from playground.options.user_input.user_files import read_text
from playground.sweeps.errors import SweepError

_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\f]+) | (?P<newline>\n) | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?L?)
  | (?P<name>[A-Za-z.][A-Za-z0-9._]*)
  | (?P<op><-|[(),=^{}\-+])
""", re.VERBOSE)
_PARAMS = {"makeDiscreteParam": ("values",), "makeIntegerParam": ("lower", "upper"),
           "makeNumericParam": ("lower", "upper"), "makeLogicalParam": ()}
_OPTIONAL = {"default", "tunable", "trafo"}


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    line: int


@dataclass
class _Call:
    name: str
    args: list[tuple[str | None, Any]]     # (keyword or None, value)
    line: int


@dataclass(frozen=True)
class _Trafo:
    base: float
    line: int


def read_param_set(path: str) -> dict[str, dict]:
    """The space of the file's makeParamSet, as the spec's `space` mapping. Raises SweepError."""
    return param_set_space(read_text(path, "the parameter-set file", path, SweepError), path)


def param_set_space(text: str, path: str = "<text>") -> dict[str, dict]:
    parser = _Parser(_tokens(text, path), path)
    call = parser.statement()
    if call.name != "makeParamSet":
        raise parser.error(call.line, f"expected makeParamSet(...), found {call.name}(...)")
    space: dict[str, dict] = {}
    for keyword, param in call.args:
        if keyword is not None or not isinstance(param, _Call):
            raise parser.error(call.line, "makeParamSet takes make...Param(...) calls only")
        name, spec = _param(param, parser)
        if name in space:
            raise parser.error(param.line, f"parameter {name!r} is defined twice")
        space[name] = spec
    return space


def _tokens(text: str, path: str) -> list[_Token]:
    out, line, position = [], 1, 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise SweepError(f"{path}, line {line}: unexpected {text[position]!r}")
        kind = match.lastgroup
        if kind == "newline":
            line += 1
        elif kind not in ("space", "comment"):
            out.append(_Token(kind, match.group(), line))
        position = match.end()
    return out


class _Parser:
    def __init__(self, tokens: list[_Token], path: str) -> None:
        self.tokens, self.path, self.at = tokens, path, 0

    def error(self, line: int, message: str) -> SweepError:
        return SweepError(f"{self.path}, line {line}: {message}")

    def peek(self) -> _Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, text: str | None = None) -> _Token:
        token = self.peek()
        if token is None:
            last = self.tokens[-1].line if self.tokens else 1
            raise self.error(last, f"the file ends where {text or 'more'!r} was expected (an unclosed bracket?)")
        if text is not None and token.text != text:
            raise self.error(token.line, f"expected {text!r}, found {token.text!r}")
        self.at += 1
        return token

    def statement(self) -> _Call:
        """`[name <-|=] makeParamSet(...)`, and nothing after it."""
        if len(self.tokens) > 1 and self.tokens[0].kind == "name" and self.tokens[1].text in ("<-", "="):
            self.at = 2
        if self.peek() is None:
            raise self.error(1, "no makeParamSet(...) in the file")
        value = self.value()
        if not isinstance(value, _Call):
            raise self.error(self.tokens[0].line, "expected makeParamSet(...)")
        extra = self.peek()
        if extra is not None:
            raise self.error(extra.line, f"unexpected {extra.text!r} after makeParamSet(...): the file holds one "
                                         "parameter set")
        return value

    def value(self) -> Any:
        token = self.take()
        if token.kind == "string":
            return token.text[1:-1].encode().decode("unicode_escape")
        if token.kind == "number":
            return _number(token.text)
        if token.text == "-" and self.peek() is not None and self.peek().kind == "number":
            return -_number(self.take().text)
        if token.text in ("TRUE", "FALSE"):
            return token.text == "TRUE"
        if token.text == "function":
            return self.trafo(token)
        if token.kind == "name" and self.peek() is not None and self.peek().text == "(":
            return self.call(token)
        raise self.error(token.line, f"unexpected {token.text!r}: expected a string, a number, TRUE/FALSE, "
                                     "c(...), a make...Param(...) call or function(x) B^x")

    def call(self, name: _Token) -> _Call:
        self.take("(")
        args: list[tuple[str | None, Any]] = []
        while self.peek() is not None and self.peek().text != ")":
            keyword = None
            after = self.tokens[self.at + 1] if self.at + 1 < len(self.tokens) else None
            if self.peek().kind == "name" and after is not None and after.text == "=":
                keyword = self.take().text
                self.take("=")
            args.append((keyword, self.value()))
            if self.peek() is not None and self.peek().text == ",":
                self.take(",")
                if self.peek() is not None and self.peek().text == ")":
                    raise self.error(self.peek().line, "a comma before ')': an argument is missing")
            elif self.peek() is not None and self.peek().text != ")":
                raise self.error(self.peek().line, f"expected ',' or ')', found {self.peek().text!r}")
        self.take(")")
        return _Call(name.text, args, name.line)

    def trafo(self, keyword: _Token) -> _Trafo:
        """`function(x) B^x` (or with braces): the only transformation kept; anything else is an error."""
        self.take("(")
        argument = self.take()
        self.take(")")
        braced = self.peek() is not None and self.peek().text == "{"
        if braced:
            self.take("{")
        body = []
        while self.peek() is not None and self.peek().text not in (",", ")", "}"):
            body.append(self.take())
        if braced:
            self.take("}")
        shape = [t.kind if t.kind == "number" else t.text for t in body]
        if shape != ["number", "^", argument.text]:
            written = " ".join(t.text for t in body) or "nothing"
            raise self.error(keyword.line, f"trafo function({argument.text}) {written}: only B^{argument.text} "
                                           f"(e.g. 10^{argument.text}, 2L^{argument.text}) is supported")
        base = float(_number(body[0].text))
        if base <= 1:
            raise self.error(keyword.line, f"trafo base {body[0].text}: expected a number above 1")
        return _Trafo(base, keyword.line)


def _number(text: str) -> int | float:
    if text.endswith("L"):
        return int(float(text[:-1]))
    return int(text) if re.fullmatch(r"\d+", text) else float(text)


def _param(call: _Call, parser: _Parser) -> tuple[str, dict]:
    if call.name not in _PARAMS:
        raise parser.error(call.line, f"{call.name} is not supported; use one of {', '.join(_PARAMS)}")
    positional = [value for keyword, value in call.args if keyword is None]
    named = {keyword: value for keyword, value in call.args if keyword is not None}
    order = ("id", *_PARAMS[call.name])
    if len(positional) > len(order):
        raise parser.error(call.line, f"{call.name}: too many arguments by position")
    for keyword, value in zip(order, positional):
        if keyword in named:
            raise parser.error(call.line, f"{call.name}: {keyword} is given twice")
        named[keyword] = value
    unknown = sorted(set(named) - set(order) - _OPTIONAL)
    if unknown:
        raise parser.error(call.line, f"{call.name}: {', '.join(unknown)} not supported (supported: "
                                      f"{', '.join([*order, *sorted(_OPTIONAL)])})")
    missing = [key for key in order if key not in named]
    if missing:
        raise parser.error(call.line, f"{call.name}: {', '.join(missing)} missing")
    name = named["id"]
    if not isinstance(name, str) or not name:
        raise parser.error(call.line, f"{call.name}: the first argument is the parameter's name, a string")
    if named.get("tunable") is False:
        raise parser.error(call.line, f"{call.name}({name!r}): tunable = FALSE is not supported; give the value "
                                      "to the benchmark directly (a --set or its defaults file)")
    return name, _spec(call, name, named, parser)


def _spec(call: _Call, name: str, named: dict, parser: _Parser) -> dict:
    trafo = named.get("trafo")
    if trafo is not None and not isinstance(trafo, _Trafo):
        raise parser.error(call.line, f"{name}: trafo must be function(x) B^x")
    if call.name == "makeLogicalParam":
        return {"type": "categorical", "vals": [True, False]}
    if call.name == "makeDiscreteParam":
        values = named["values"]
        values = values.args if isinstance(values, _Call) and values.name == "c" else [(None, values)]
        if not values or any(k is not None or isinstance(v, (_Call, _Trafo)) for k, v in values):
            raise parser.error(call.line, f"{name}: values must be c(...) of strings, numbers or TRUE/FALSE")
        for _, value in values:
            try:
                split_candle_list(value)
            except ListValueError as err:
                raise parser.error(call.line, f"{name}: {err}") from None
        if trafo is not None:
            raise parser.error(call.line, f"{name}: a trafo on a discrete parameter is not supported")
        return {"type": "categorical", "vals": [v for _, v in values]}
    lower, upper = named["lower"], named["upper"]
    integer = call.name == "makeIntegerParam"
    kinds = (int,) if integer else (int, float)
    if not all(isinstance(v, kinds) and not isinstance(v, bool) for v in (lower, upper)):
        raise parser.error(call.line, f"{name}: lower and upper must be {'integers' if integer else 'numbers'}")
    if lower > upper:
        raise parser.error(call.line, f"{name}: lower {lower} is above upper {upper}")
    if trafo is None:
        return {"type": "int" if integer else "double", "minval": lower, "maxval": upper}
    if integer:
        base = int(trafo.base) if float(trafo.base).is_integer() else trafo.base
        return {"type": "categorical", "vals": [base ** x for x in range(lower, upper + 1)]}
    return {"type": "log", "base": trafo.base, "minval": lower, "maxval": upper}
