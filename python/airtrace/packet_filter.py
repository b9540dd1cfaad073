"""Display filters over the packets table (`airtrace analyze --filter EXPR`), in the
spirit of Wireshark's: `retransmission and conn == 3`, `not duplicate_ack`,
`retrans_kind == timeout or (seglen > 1000 and dir == 1)`.

The expression is parsed here, by a small recursive-descent parser, into operations on
the DataFrame's columns; nothing the user typed is ever evaluated as Python. Grammar:

    expr       := and_expr (("or" | "||") and_expr)*
    and_expr   := not_expr (("and" | "&&") not_expr)*
    not_expr   := ("not" | "!") not_expr | "(" expr ")" | comparison
    comparison := COLUMN [OP VALUE]          a bare column is true where it is true
    OP         := "==" | "eq" | "!=" | "ne" | "<" | "lt" | "<=" | "le" | ">" | "gt" | ">=" | "ge"
    VALUE      := a number | a word | a "double-quoted" or 'single-quoted' string

A column missing in a row (null) satisfies no comparison, as in Wireshark. A bad
expression raises FilterError, one line naming the bad token and what was expected.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq, "eq": operator.eq, "!=": operator.ne, "ne": operator.ne,
    "<": operator.lt, "lt": operator.lt, "<=": operator.le, "le": operator.le,
    ">": operator.gt, "gt": operator.gt, ">=": operator.ge, "ge": operator.ge,
}
_TOKEN = re.compile(r"""\s*(?:(?P<op>==|!=|<=|>=|<|>|&&|\|\||!|\(|\))|(?P<str>"[^"]*"|'[^']*')|(?P<word>[^\s()<>=!&|"']+))""")


class FilterError(ValueError):
    """The filter expression cannot be read; the message is one line."""


def tokens(text: str) -> list[str]:
    """The tokens of `text`; FilterError at a character that starts none."""
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise FilterError(f"--filter: unexpected {text[pos:].strip()[:20]!r} at character {pos + 1}")
        out.append(m.group(m.lastgroup or "word"))
        pos = m.end()
    return out


def mask(packets: pd.DataFrame, expression: str) -> pd.Series:
    """The rows of `packets` that `expression` keeps (a boolean Series)."""
    return _Parser(tokens(expression), packets).parse()


class _Parser:
    def __init__(self, toks: Sequence[str], packets: pd.DataFrame) -> None:
        self.toks, self.i, self.packets = list(toks), 0, packets

    def parse(self) -> pd.Series:
        if not self.toks:
            raise FilterError("--filter: empty expression; e.g. 'retransmission and conn == 3'")
        result = self._or()
        if self.i < len(self.toks):
            raise FilterError(f"--filter: unexpected {self.toks[self.i]!r} after a complete expression; join with 'and' or 'or'")
        return result

    def _peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def _next(self, expected: str) -> str:
        tok = self._peek()
        if tok is None:
            raise FilterError(f"--filter: the expression ends where {expected} was expected")
        self.i += 1
        return tok

    def _or(self) -> pd.Series:
        result = self._and()
        while self._peek() in ("or", "||"):
            self.i += 1
            result = result | self._and()
        return result

    def _and(self) -> pd.Series:
        result = self._not()
        while self._peek() in ("and", "&&"):
            self.i += 1
            result = result & self._not()
        return result

    def _not(self) -> pd.Series:
        tok = self._next("a column, 'not' or '('")
        if tok in ("not", "!"):
            return ~self._not()
        if tok == "(":
            result = self._or()
            if self._next("')'") != ")":
                raise FilterError(f"--filter: {self.toks[self.i - 1]!r} where ')' was expected")
            return result
        return self._comparison(tok)

    def _comparison(self, name: str) -> pd.Series:
        import pandas as pd

        column = self._column(name)
        op = self._peek()
        if op not in _OPS:
            if not pd.api.types.is_bool_dtype(column.dtype):
                raise FilterError(
                    f"--filter: {name!r} is not true or false; compare it: {name} == VALUE (operators: == != < <= > >=)"
                )
            return column.fillna(False).astype(bool)
        self.i += 1
        value = self._value(name, column, self._next(f"a value to compare {name} with"))
        try:
            kept = _OPS[op](column, value)
        except TypeError:
            raise FilterError(f"--filter: {name} has no order; use == or != (its values: {_some_values(column)})") from None
        return pd.Series(kept, index=column.index).fillna(False).astype(bool)

    def _column(self, name: str) -> pd.Series:
        if name not in self.packets.columns:
            from airtrace.suggest import did_you_mean

            hint = did_you_mean(name, list(self.packets.columns))
            raise FilterError(
                f"--filter: unknown column {name!r}{hint}; the columns are: {', '.join(self.packets.columns)}"
            )
        column: pd.Series = self.packets[name]
        return column

    @staticmethod
    def _value(name: str, column: pd.Series, tok: str) -> Any:
        import pandas as pd

        if tok in _OPS or tok in ("(", ")", "and", "or", "not", "&&", "||", "!"):
            raise FilterError(f"--filter: {tok!r} where a value to compare {name} with was expected")
        text = tok[1:-1] if tok[:1] in "\"'" else tok
        dtype = column.dtype
        if pd.api.types.is_bool_dtype(dtype):
            if text.lower() in ("true", "1", "false", "0"):
                return text.lower() in ("true", "1")
        elif pd.api.types.is_numeric_dtype(dtype):
            try:
                return float(text) if pd.api.types.is_float_dtype(dtype) or "." in text else int(text, 0)
            except ValueError:
                pass
        elif isinstance(dtype, pd.DatetimeTZDtype):
            try:
                ts = pd.Timestamp(text)
            except ValueError:
                pass
            else:
                return ts if ts.tzinfo is not None else ts.tz_localize("UTC")
        else:
            return text
        raise FilterError(f"--filter: {tok!r} is not a value of {name} ({dtype})")


def _some_values(column: pd.Series) -> str:
    """A few of the values a column holds, for messages."""
    values = [str(v) for v in column.dropna().unique()[:5]]
    return ", ".join(values) if values else "none"
