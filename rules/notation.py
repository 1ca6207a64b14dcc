"""Generic dice notation, safe to feed from any client.

Grammar (case-insensitive, spaces ignored)::

    expression := term (("+" | "-") term)*
    term       := dice | number
    dice       := [count] "d" sides modifier*
    modifier   := "kh" n | "kl" n | "k" n       keep highest / lowest n
                | "dh" n | "dl" n              drop highest / lowest n
                | "!"                          explode: a die showing its top face adds another die
                | ">=" n | ">" n | "<=" n | "<" n
                                                count successes instead of summing

Examples: ``d20``, ``3d6+2``, ``4d6kh3``, ``2d20kl1-1``, ``1d6!``, ``5d10>=7``.

Hard caps (``LIMITS``) bound everything a hostile string could ask for: its
length, the number of terms, dice per term, total dice rolled (explosions
included), sides, explosion depth and constants. Any violation raises
:class:`NotationError` with a message for a person, before a single die is
rolled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .base import DiceSource, Event, RuleError

LIMITS = {
    "length": 100,  # characters in the expression
    "terms": 20,  # dice groups and numbers added together
    "dice": 100,  # dice in one group
    "total_dice": 300,  # dice in the whole expression, before explosions
    "sides": 1000,
    "explode_depth": 20,  # extra dice one die may add by exploding
    "constant": 1_000_000,
}


class NotationError(RuleError):
    code = "bad_notation"


_TOKEN = re.compile(
    r"""
    (?P<dice>(?P<count>\d+)?d(?P<sides>\d+)(?P<mods>(?:kh\d+|kl\d+|k\d+|dh\d+|dl\d+|!|>=\d+|<=\d+|>\d+|<\d+)*))
    |(?P<number>\d+)
    """,
    re.VERBOSE,
)
_MOD = re.compile(r"kh(\d+)|kl(\d+)|k(\d+)|dh(\d+)|dl(\d+)|(!)|(>=|<=|>|<)(\d+)")


@dataclass
class Term:
    sign: int
    text: str
    count: int = 0
    sides: int = 0
    constant: int | None = None
    keep: tuple[str, int] | None = None  # ("high"|"low", n)
    explode: bool = False
    success: tuple[str, int] | None = None  # (comparison, threshold)
    rolls: list[dict] = field(default_factory=list)
    value: int = 0


def _number(text: str, what: str, limit: int) -> int:
    if len(text) > 7:
        raise NotationError(f"{what} {text[:12]}... is too large (at most {limit}).")
    value = int(text)
    if value > limit:
        raise NotationError(f"{what} {value} is too large (at most {limit}).")
    return value


def parse(notation: object) -> list[Term]:
    """Parse notation into terms, enforcing every limit. Rolls nothing."""
    if not isinstance(notation, str):
        raise NotationError("The dice notation must be a string such as '3d6+2'.")
    if len(notation) > LIMITS["length"]:
        raise NotationError(f"The dice notation is too long (at most {LIMITS['length']} characters).")
    text = re.sub(r"\s+", "", notation.lower())
    if not text:
        raise NotationError("The dice notation is empty: try something like '3d6+2'.")
    terms: list[Term] = []
    pos, sign = 0, 1
    if text[0] in "+-":
        sign = -1 if text[0] == "-" else 1
        pos = 1
    while True:
        match = _TOKEN.match(text, pos)
        if not match:
            raise NotationError(f"I can't read the dice notation at '{text[pos:pos + 10]}': try something like '3d6+2'.")
        terms.append(_term(match, sign))
        if len(terms) > LIMITS["terms"]:
            raise NotationError(f"Too many terms: at most {LIMITS['terms']} added together.")
        pos = match.end()
        if pos == len(text):
            break
        if text[pos] not in "+-":
            raise NotationError(f"Expected '+' or '-' at '{text[pos:pos + 10]}'.")
        sign = -1 if text[pos] == "-" else 1
        pos += 1
        if pos == len(text):
            raise NotationError("The dice notation ends with a sign: add a term after it.")
    total = sum(t.count for t in terms)
    if total > LIMITS["total_dice"]:
        raise NotationError(f"That is {total} dice: at most {LIMITS['total_dice']} in one roll.")
    if not any(t.count for t in terms):
        raise NotationError("The notation rolls no dice: add one such as 'd20'.")
    return terms


def _term(match: re.Match, sign: int) -> Term:
    if match.group("number") is not None:
        value = _number(match.group("number"), "The number", LIMITS["constant"])
        return Term(sign=sign, text=match.group(0), constant=value)
    count = _number(match.group("count") or "1", "The dice count", LIMITS["dice"])
    sides = _number(match.group("sides"), "The number of sides", LIMITS["sides"])
    if count < 1:
        raise NotationError("Roll at least one die.")
    if sides < 2:
        raise NotationError("A die needs at least 2 sides.")
    term = Term(sign=sign, text=match.group(0), count=count, sides=sides)
    for mod in _MOD.finditer(match.group("mods") or ""):
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


def _meets(face: int, cmp: str, threshold: int) -> bool:
    return {">=": face >= threshold, ">": face > threshold, "<=": face <= threshold, "<": face < threshold}[cmp]


def roll(notation: object, dice: DiceSource) -> dict:
    """Parse and roll; return the payload of a ``roll`` event.

    Every die is recorded with whether it was kept, whether it exploded, and
    (when counting successes) whether it is a success.
    """
    terms = parse(notation)
    for term in terms:
        if term.constant is not None:
            term.value = term.constant
            continue
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
    counts_successes = any(t.success for t in terms)
    total = sum(t.sign * t.value for t in terms)
    return {
        "notation": notation.strip(),
        "terms": [
            {
                "text": ("-" if t.sign < 0 else "+") + t.text,
                "sign": t.sign,
                **({"constant": t.constant} if t.constant is not None else {"sides": t.sides, "dice": t.rolls}),
                "value": t.value,
            }
            for t in terms
        ],
        "total": total,
        "counts_successes": counts_successes,
    }


def roll_event(action: dict, dice: DiceSource) -> Event:
    """The generic ``{"type": "roll", "notation": "..."}`` action, any system."""
    payload = roll(action.get("notation"), dice)
    label = action.get("label")
    if label is not None:
        if not isinstance(label, str) or len(label) > 120:
            raise RuleError("'label' must be text of at most 120 characters.", "invalid")
        payload["label"] = label
    return Event("roll", payload)
