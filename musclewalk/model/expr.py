"""Safe arithmetic expressions used in creature templates.

Template values may be numbers or strings such as ``"hip_width / 2 + 0.01"``. They are
evaluated with the template's parameters as variables; only arithmetic, comparisons,
conditional expressions and a few math functions are allowed (no attribute access,
no calls to anything else).
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Mapping

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv,
}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_}
_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
FUNCTIONS = {
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "sqrt": math.sqrt,
    "radians": math.radians,
    "degrees": math.degrees,
    "abs": abs,
    "min": min,
    "max": max,
    "atan2": math.atan2,
}
CONSTANTS = {"pi": math.pi}


class ExpressionError(ValueError):
    """An expression could not be parsed or evaluated."""


def evaluate(value, variables: Mapping[str, float]) -> float:
    """Evaluate a number or an expression string to a float."""
    if isinstance(value, bool):
        raise ExpressionError(f"expected a number or expression, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        raise ExpressionError(f"expected a number or expression, got {value!r}")
    try:
        tree = ast.parse(value.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"invalid expression {value!r}: {exc.msg}") from None
    try:
        result = _eval(tree.body, variables)
    except ZeroDivisionError:
        raise ExpressionError(f"division by zero in {value!r}") from None
    if isinstance(result, bool):
        return float(result)
    if not isinstance(result, (int, float)) or not math.isfinite(result):
        raise ExpressionError(f"expression {value!r} did not give a finite number")
    return float(result)


def _eval(node, variables):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in variables:
            return variables[node.id]
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise ExpressionError(f"unknown name '{node.id}'")
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left, variables), _eval(node.right, variables))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, variables))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return _COMPARE[type(node.ops[0])](_eval(node.left, variables), _eval(node.comparators[0], variables))
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, variables) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, variables) else node.orelse, variables)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in FUNCTIONS
        and not node.keywords
    ):
        return FUNCTIONS[node.func.id](*[_eval(a, variables) for a in node.args])
    raise ExpressionError(f"unsupported syntax: {ast.dump(node)[:60]}")


def format_name(template: str, variables: Mapping[str, float | str]) -> str:
    """Fill ``{expr}`` fields of a name, e.g. ``"neck_{i-1}"`` or ``"upper_{side}"``."""
    out, pos = [], 0
    while True:
        start = template.find("{", pos)
        if start < 0:
            out.append(template[pos:])
            return "".join(out)
        end = template.find("}", start)
        if end < 0:
            raise ExpressionError(f"unbalanced '{{' in name {template!r}")
        out.append(template[pos:start])
        field = template[start + 1 : end].strip()
        if field in variables and isinstance(variables[field], str):
            out.append(variables[field])
        else:
            numeric = {k: v for k, v in variables.items() if not isinstance(v, str)}
            val = evaluate(field, numeric)
            out.append(str(int(val)) if float(val).is_integer() else str(val))
        pos = end + 1
