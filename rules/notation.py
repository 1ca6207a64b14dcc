"""Generic dice notation, safe to feed from any client.

Grammar (case-insensitive; spaces between terms and operators are ignored)::

    notation   := expression [label]
    expression := product (("+" | "-") product)*
    product    := factor ("*" factor)*
    factor     := ("+" | "-")* (dice | number | "(" expression ")") ["[" label "]"]
    dice       := [count] "d" (sides | "%" | "F") modifier*
    modifier   := "kh" n | "kl" n | "k" n       keep highest / lowest n
                | "dh" n | "dl" n              drop highest / lowest n
                | "!"                          explode: a die showing its top face adds another die
                | ">=" n | ">" n | "<=" n | "<" n
                                                count successes instead of summing

``d%`` is a d100. ``dF`` is a Fate die (-1, 0 or +1; drawn as a d3, so the dice log
records ``[3, n]``; it takes no modifiers). ``[fire]`` after a dice group or number
labels that group; text after the expression, set off by a space, labels the whole
roll (``2d6+3 fire damage``).

Examples: ``d20``, ``3d6+2``, ``4d6kh3``, ``2d20kl1-1``, ``1d6!``, ``5d10>=7``, ``d%``,
``4dF+2``, ``(2d6+3)*2``, ``2d6[fire]+1d4[cold]``, ``1d8+2 longsword``.

Hard caps (``LIMITS``) bound everything a hostile string could ask for: its
length, the number of terms, dice per term, total dice rolled (explosions
included), sides, explosion depth, constants, nesting and the size of the
result. Any violation raises :class:`NotationError` with a message for a
person, before a single die is rolled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import DiceSource, Event, RuleError

LIMITS = {
    "length": 100,  # characters in the notation, labels included
    "terms": 20,  # dice groups and numbers in the whole expression
    "dice": 100,  # dice in one group
    "total_dice": 300,  # dice in the whole expression, before explosions
    "sides": 1000,
    "explode_depth": 20,  # extra dice one die may add by exploding
    "constant": 1_000_000,
    "depth": 10,  # parentheses inside parentheses
    "result": 1_000_000_000,  # the largest total the expression could reach (multiplication)
    "label": 40,  # characters in one [label]
}

FATE_FACES = {1: -1, 2: 0, 3: 1}  # a Fate die is a d3 read as -, blank, +


class NotationError(RuleError):
    code = "bad_notation"


_ATOM = re.compile(
    r"""
    (?P<dice>(?P<count>\d+)?d(?P<sides>\d+|%|f)
      (?P<mods>(?:\s*(?:(?:kh|kl|k|dh|dl)\s*\d+|!|(?:>=|<=|>|<)\s*\d+))*))
    |(?P<number>\d+)
    """,
    re.VERBOSE,
)
_MOD = re.compile(r"kh(\d+)|kl(\d+)|k(\d+)|dh(\d+)|dl(\d+)|(!)|(>=|<=|>|<)(\d+)")
_LABEL = re.compile(r"\s*\[([^\[\]]*)\]")


@dataclass
class Term:
    """One dice group or number of the expression (a leaf), in the order written."""

    sign: int
    text: str
    op: str = "+"  # what joins it to what comes before: "+"/"-" (``sign``) or "*"
    count: int = 0
    sides: int = 0
    constant: int | None = None
    keep: tuple[str, int] | None = None  # ("high"|"low", n)
    explode: bool = False
    success: tuple[str, int] | None = None  # (comparison, threshold)
    fate: bool = False
    label: str | None = None
    rolls: list[dict] = field(default_factory=list)
    value: int = 0


# The expression tree: a sum is [(sign, product)], a product is [factor], a factor is
# (sign, Term | sum). Terms are evaluated once rolled; the tree only combines their values.
Sum = list
Factor = tuple


@dataclass
class Parsed:
    expression: Sum
    terms: list[Term]
    notation: str  # the expression as written, without the trailing label
    label: str | None


def _number(text: str, what: str, limit: int) -> int:
    if len(text) > 7:
        raise NotationError(f"{what} {text[:12]}... is too large (at most {limit}).")
    value = int(text)
    if value > limit:
        raise NotationError(f"{what} {value} is too large (at most {limit}).")
    return value


class _Parser:
    """Recursive descent over the grammar above; recursion only at '(' (capped by ``depth``)."""

    def __init__(self, text: str):
        self.text = text
        self.low = text.lower()
        self.pos = 0
        self.terms: list[Term] = []

    def peek(self) -> str:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.low[self.pos] if self.pos < len(self.text) else ""

    def around(self) -> str:
        return self.text[self.pos:self.pos + 10]

    def expression(self, depth: int, sign: int = 1, op: str = "+") -> Sum:
        parts = []
        while True:
            parts.append((sign, self.product(depth, sign, op)))
            op = self.peek()
            if op not in ("+", "-"):
                return parts
            self.pos += 1
            sign = -1 if op == "-" else 1
            if self.peek() == "":
                raise NotationError("The dice notation ends with a sign: add a term after it.")

    def product(self, depth: int, sign: int, op: str) -> list[Factor]:
        factors = [self.factor(depth, sign, op)]
        while self.peek() == "*":
            self.pos += 1
            if self.peek() == "":
                raise NotationError("The dice notation ends with '*': add a term after it.")
            factors.append(self.factor(depth, 1, "*"))
        return factors

    def factor(self, depth: int, sign: int, op: str) -> Factor:
        unary = 1
        while self.peek() in ("+", "-"):
            unary = -unary if self.low[self.pos] == "-" else unary
            self.pos += 1
        if self.peek() == "(":
            if depth >= LIMITS["depth"]:
                raise NotationError(f"Too many parentheses inside each other (at most {LIMITS['depth']}).")
            self.pos += 1
            if self.peek() == ")":
                raise NotationError("Empty parentheses: put dice inside, as in '(2d6+1)*2'.")
            inner = self.expression(depth + 1)
            if self.peek() != ")":
                raise NotationError(f"A '(' is not closed: expected ')' at '{self.around()}'.")
            self.pos += 1
            if self.peek() == "[":
                raise NotationError("A [label] goes after a dice group or a number, not after ')'.")
            return (unary, inner)
        match = _ATOM.match(self.low, self.pos)
        if not match:
            raise NotationError(f"I can't read the dice notation at '{self.around()}': try something like '3d6+2'.")
        term = _term(match, sign * unary if op != "*" else unary, op)
        self.pos = match.end()
        label = _LABEL.match(self.text, self.pos)
        if label:
            term.label = label.group(1).strip()
            if not term.label or len(term.label) > LIMITS["label"]:
                raise NotationError(f"A [label] needs 1 to {LIMITS['label']} characters.")
            self.pos = label.end()
        elif self.peek() == "[":
            raise NotationError("A [label] needs its closing ']' (and no '[' inside).")
        self.terms.append(term)
        if len(self.terms) > LIMITS["terms"]:
            raise NotationError(f"Too many terms: at most {LIMITS['terms']} dice groups and numbers.")
        return (unary, term)


def parse_notation(notation: object) -> Parsed:
    """Parse notation into its expression, terms and label, enforcing every limit. Rolls nothing."""
    if not isinstance(notation, str):
        raise NotationError("The dice notation must be a string such as '3d6+2'.")
    if len(notation) > LIMITS["length"]:
        raise NotationError(f"The dice notation is too long (at most {LIMITS['length']} characters).")
    parser = _Parser(notation)
    if parser.peek() == "":
        raise NotationError("The dice notation is empty: try something like '3d6+2'.")
    expression = parser.expression(0)
    end = parser.pos
    label = None
    if parser.peek():
        if parser.low[end] == ")":
            raise NotationError("A ')' has no '(' before it.")
        if not notation[end - 1].isspace():
            raise NotationError(f"Expected '+', '-' or '*' at '{parser.around()}'.")
        label = notation[end:].strip()  # "2d6+3 fire damage": a space, then words label the roll
    terms = parser.terms
    total = sum(t.count for t in terms)
    if total > LIMITS["total_dice"]:
        raise NotationError(f"That is {total} dice: at most {LIMITS['total_dice']} in one roll.")
    if not total:
        raise NotationError("The notation rolls no dice: add one such as 'd20'.")
    if _largest(expression) > LIMITS["result"]:
        raise NotationError(f"That could total more than {LIMITS['result']:,}: multiply smaller numbers.")
    return Parsed(expression, terms, notation[:end].strip(), label)


def parse(notation: object) -> list[Term]:
    """The terms of a notation, in the order written (see :func:`parse_notation`)."""
    return parse_notation(notation).terms


def _term(match: re.Match, sign: int, op: str) -> Term:
    if match.group("number") is not None:
        value = _number(match.group("number"), "The number", LIMITS["constant"])
        return Term(sign=sign, op=op, text=match.group(0), constant=value)
    count = _number(match.group("count") or "1", "The dice count", LIMITS["dice"])
    written = re.sub(r"\s+", "", match.group(0))
    if count < 1:
        raise NotationError("Roll at least one die.")
    if match.group("sides") == "f":
        if match.group("mods").strip():
            raise NotationError("Fate dice (dF) take no keep, explode or success modifiers.")
        return Term(sign=sign, op=op, text=written[:-1] + "F", count=count, sides=3, fate=True)
    sides = 100 if match.group("sides") == "%" else _number(match.group("sides"), "The number of sides", LIMITS["sides"])
    if sides < 2:
        raise NotationError("A die needs at least 2 sides.")
    term = Term(sign=sign, op=op, text=written, count=count, sides=sides)
    for mod in _MOD.finditer(re.sub(r"\s+", "", match.group("mods") or "")):
        kh, kl, k, dh, dl, bang, cmp, threshold = mod.groups()
        if bang:
            if term.explode:
                raise NotationError("Explode ('!') is given twice.")
            term.explode = True
        elif cmp:
            if term.success:
                raise NotationError("Only one success condition per dice group.")
            term.success = (cmp, _number(threshold, "The success threshold", sides))
        else:
            if term.keep:
                raise NotationError("Only one keep or drop per dice group.")
            n_text = kh or kl or k or dh or dl
            n = _number(n_text, "The keep/drop count", count)
            if kh or k:
                term.keep = ("high", n)
            elif kl:
                term.keep = ("low", n)
            elif dh:
                term.keep = ("low", count - n)
            else:
                term.keep = ("high", count - n)
    if term.explode and term.sides < 3:
        # A d2 exploding on 2 would explode half the time: allowed by maths,
        # but it is almost always a typo; refuse rather than surprise.
        raise NotationError("Exploding dice need at least 3 sides.")
    if term.keep and term.success:
        raise NotationError("Use either keep/drop or a success condition on one dice group, not both.")
    return term


def _largest(sum_: Sum) -> int:
    """An upper bound of the expression's absolute value, whatever the dice show."""
    total = 0
    for _, product in sum_:
        bound = 1
        for _, inner in product:
            bound *= _largest_term(inner) if isinstance(inner, Term) else _largest(inner)
        total += bound
    return total


def _largest_term(term: Term) -> int:
    if term.constant is not None:
        return term.constant
    dice = term.count * (LIMITS["explode_depth"] + 1 if term.explode else 1)
    return dice if term.success or term.fate else dice * term.sides


def _value(sum_: Sum) -> int:
    total = 0
    for sign, product in sum_:
        value = 1
        for unary, inner in product:
            value *= unary * (inner.value if isinstance(inner, Term) else _value(inner))
        total += sign * value
    return total


def _meets(face: int, cmp: str, threshold: int) -> bool:
    return {">=": face >= threshold, ">": face > threshold, "<=": face <= threshold, "<": face < threshold}[cmp]


def _roll_term(term: Term, dice: DiceSource) -> None:
    if term.constant is not None:
        term.value = term.constant
        return
    if term.fate:
        term.rolls = [{"face": FATE_FACES[dice.roll(3)], "kept": True} for _ in range(term.count)]
        term.value = sum(f["face"] for f in term.rolls)
        return
    faces: list[dict] = []
    for _ in range(term.count):
        face = dice.roll(term.sides)
        faces.append({"face": face, "kept": True})
        depth = 0
        while term.explode and face == term.sides and depth < LIMITS["explode_depth"]:
            faces[-1]["exploded"] = True
            face = dice.roll(term.sides)
            faces.append({"face": face, "kept": True, "from_explosion": True})
            depth += 1
    if term.keep:
        side, n = term.keep
        order = sorted(range(len(faces)), key=lambda i: faces[i]["face"], reverse=(side == "high"))
        keep = set(order[:n])
        for i, f in enumerate(faces):
            f["kept"] = i in keep
    if term.success:
        cmp, threshold = term.success
        for f in faces:
            f["success"] = _meets(f["face"], cmp, threshold)
        term.value = sum(1 for f in faces if f["success"])
    else:
        term.value = sum(f["face"] for f in faces if f["kept"])
    term.rolls = faces


def _term_json(t: Term) -> dict:
    joined = "*" + ("-" if t.sign < 0 else "") if t.op == "*" else ("-" if t.sign < 0 else "+")
    out = {"text": joined + t.text, "sign": t.sign}
    if t.op == "*":
        out["op"] = "*"
    if t.constant is not None:
        out["constant"] = t.constant
    else:
        out.update({"sides": t.sides, "dice": t.rolls})
        if t.fate:
            out["fate"] = True
    if t.label:
        out["label"] = t.label
    out["value"] = t.value
    return out


def roll(notation: object, dice: DiceSource) -> dict:
    """Parse and roll; return the payload of a ``roll`` event.

    Every die is recorded with whether it was kept, whether it exploded, and
    (when counting successes) whether it is a success. Terms are listed (and their
    dice drawn) in the order written; ``total`` follows the expression's arithmetic.
    """
    parsed = parse_notation(notation)
    for term in parsed.terms:
        _roll_term(term, dice)
    payload = {
        "notation": parsed.notation,
        "terms": [_term_json(t) for t in parsed.terms],
        "total": _value(parsed.expression),
        "counts_successes": any(t.success for t in parsed.terms),
    }
    if parsed.label:
        payload["label"] = parsed.label
    return payload


def roll_event(action: dict, dice: DiceSource) -> Event:
    """The generic ``{"type": "roll", "notation": "..."}`` action, any system.

    A ``label`` sent with the action comes first, a label written in the notation after it."""
    payload = roll(action.get("notation"), dice)
    label = action.get("label")
    if label is not None:
        if not isinstance(label, str) or len(label) > 120:
            raise RuleError("'label' must be text of at most 120 characters.", "invalid")
        payload["label"] = " · ".join(part for part in (label, payload.get("label")) if part)
    return Event("roll", payload)
