"""Dice statistics: were the dice fair tonight?

Every rolling command records every die it drew in its first event's
``payload["dice_log"]`` as ``[sides, face]`` pairs (docs/fair-dice.md). This
module counts the faces per die size, compares them with what fair dice give
(each face ``n / sides`` times) with Pearson's chi-square test, and draws the
counts as an SVG bar chart.

* Hidden rolls count only for viewers who may see their dice: every event
  passes through :func:`campaign.visibility.for_viewer` (the GM sees all).
* Voided events count: their dice were rolled all the same.
* The p-value is exact (no SciPy): the chi-square survival function with
  ``df`` degrees of freedom is the regularized upper incomplete gamma function
  ``Q(df/2, x/2)``, and ``df/2`` is always a whole or half-whole number, for
  which ``Q`` is a finite sum of positive terms (plus ``erfc`` for halves).

Statistics say whether the faces *look* like fair dice; ``verify dice``
(:func:`campaign.fairdice.verify_session`) proves each die came from the
committed seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape
from typing import Iterable

from .eventlog import marks_after
from .models import Campaign, Event
from .visibility import HIDDEN_ROW, Viewer, for_viewer, may_see

# Below this many expected rolls per face the chi-square approximation is poor:
# the test is still computed, but not used to call the dice unusual.
MIN_EXPECTED = 5.0
UNUSUAL_P = 0.01  # fair dice fall below this 1 time in 100
MAX_CHART_SIDES = 100  # bigger dice get the numbers, not a chart


# --- the chi-square distribution, exactly -----------------------------------------------------

def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X ~ chi-square with ``df`` (a positive whole number) degrees of freedom.

    This is Q(df/2, x/2), the regularized upper incomplete gamma function. With
    a = df/2 and y = x/2:

    * whole a:      Q(a, y) = sum_{k=0}^{a-1} e^-y y^k / k!
    * half-whole a: Q(a, y) = erfc(sqrt y) + sum_{k=0}^{a-3/2} e^-y y^(k+1/2) / Gamma(k+3/2)

    Each term is computed through its logarithm, so nothing overflows.
    """
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise ValueError("degrees of freedom must be a whole number of at least 1")
    if x != x or x < 0:
        raise ValueError("the statistic must be a number of at least 0")
    if x == 0:
        return 1.0
    if math.isinf(x):
        return 0.0
    y = x / 2
    log_y = math.log(y)
    if df % 2 == 0:
        total = sum(math.exp(-y + k * log_y - math.lgamma(k + 1)) for k in range(df // 2))
    else:
        total = math.erfc(math.sqrt(y))
        total += sum(math.exp(-y + (k + 0.5) * log_y - math.lgamma(k + 1.5)) for k in range(df // 2))
    return min(1.0, max(0.0, total))


def chi_square(counts: list[int]) -> tuple[float, int, float]:
    """Pearson's test of ``counts`` (one per face) against equal chances:
    ``(statistic, degrees of freedom, p-value)``."""
    n, k = sum(counts), len(counts)
    if k < 2 or n == 0:
        return 0.0, max(k - 1, 0), 1.0
    expected = n / k
    statistic = sum((c - expected) ** 2 for c in counts) / expected
    return statistic, k - 1, chi2_sf(statistic, k - 1)


# --- counting ---------------------------------------------------------------------------------

@dataclass
class DieStats:
    """The faces of one die size."""

    sides: int
    counts: list[int]  # counts[face - 1]

    @property
    def n(self) -> int:
        return sum(self.counts)

    @property
    def expected(self) -> float:
        return self.n / self.sides

    @property
    def test(self) -> tuple[float, int, float]:
        return chi_square(self.counts)

    @property
    def statistic(self) -> float:
        return self.test[0]

    @property
    def df(self) -> int:
        return self.test[1]

    @property
    def p_value(self) -> float:
        return self.test[2]

    @property
    def p_text(self) -> str:
        return format_p(self.p_value)

    @property
    def enough(self) -> bool:
        """Enough dice for the test to mean something (>= 5 expected per face)."""
        return self.sides >= 2 and self.expected >= MIN_EXPECTED

    @property
    def unusual(self) -> bool:
        return self.enough and self.p_value < UNUSUAL_P

    @property
    def verdict(self) -> str:
        if self.sides < 2:
            return "a one-sided die always shows 1"
        if not self.enough:
            need = math.ceil(MIN_EXPECTED * self.sides)
            return f"too few to judge: {self.n} of the {need} rolls needed for the test to mean something"
        if self.unusual:
            return f"unusual: fair dice land this far from even about {_one_in(self.p_value)}"
        return "nothing unusual: as even as fair dice usually are"

    @property
    def faces(self) -> list[dict]:
        """One row per face: observed, expected and the difference, for tables."""
        e = self.expected
        return [{"face": i + 1, "observed": c, "expected": e, "difference": c - e} for i, c in enumerate(self.counts)]

    def as_json(self) -> dict:
        statistic, df, p = self.test
        return {"sides": self.sides, "dice": self.n, "counts": {str(i + 1): c for i, c in enumerate(self.counts)},
                "expected": self.expected, "chi_square": statistic, "df": df, "p_value": p,
                "enough": self.enough, "unusual": self.unusual, "verdict": self.verdict}


def _one_in(p: float) -> str:
    if p <= 0:
        return "never (p is below the smallest number a computer can hold)"
    odds = 1 / p
    return f"1 time in {odds:,.0f}" if odds < 1e9 else f"1 time in {odds:.1e}"


@dataclass
class DiceStats:
    """Every die a viewer may see in a set of events, by size."""

    dice: list[DieStats] = field(default_factory=list)
    events: int = 0  # events whose dice were counted
    hidden: int = 0  # events this viewer receives sealed (their dice, if any, not counted)

    @property
    def total(self) -> int:
        return sum(d.n for d in self.dice)

    @property
    def unusual(self) -> list[DieStats]:
        return [d for d in self.dice if d.unusual]

    @property
    def state(self) -> str:
        """"unusual", "fair" (enough dice, nothing unusual), "few" (too few to tell) or "none"."""
        if not self.dice:
            return "none"
        if self.unusual:
            return "unusual"
        return "fair" if any(d.enough for d in self.dice) else "few"

    @property
    def answer(self) -> str:
        """The one-sentence answer to "were the dice fair?"."""
        if not self.dice:
            return "No dice were rolled here."
        if self.unusual:
            names = ", ".join(f"d{d.sides} (p = {format_p(d.p_value)})" for d in self.unusual)
            return (f"Worth a look: {names} came up less evenly than fair dice usually do. It happens by chance "
                    "now and then; “Verify dice” recomputes every die from the session's seed.")
        if not any(d.enough for d in self.dice):
            return "Too few dice to tell: the test needs at least 5 rolls per face of a die."
        return "Yes: nothing unusual. Every die size with enough rolls came up about as evenly as fair dice do."

    def as_json(self) -> dict:
        return {"answer": self.answer, "events": self.events, "dice": self.total, "hidden_events": self.hidden,
                "by_sides": [d.as_json() for d in self.dice]}


def format_p(p: float) -> str:
    if p >= 0.001:
        return f"{p:.3f}"
    return f"{p:.1e}" if p > 0 else "< 1e-300"


def count_dice(events: Iterable[dict], viewer: Viewer, revealed: set[int] | frozenset[int] = frozenset()) -> DiceStats:
    """Count the ``dice_log`` of serialized events, as ``viewer`` may see them."""
    counts: dict[int, list[int]] = {}
    stats = DiceStats()
    for data in events:
        if not (data.get("payload") or {}).get("dice_log"):
            continue
        seen = for_viewer(data, viewer, revealed)
        log = (seen.get("payload") or {}).get("dice_log")
        if seen.get("hidden") or not log:
            stats.hidden += 1
            continue
        stats.events += 1
        for sides, face in log:
            if isinstance(sides, int) and isinstance(face, int) and 1 <= face <= sides:
                counts.setdefault(sides, [0] * sides)[face - 1] += 1
    stats.dice = [DieStats(sides, counts[sides]) for sides in sorted(counts)]
    return stats


def dice_stats(campaign: Campaign, viewer: Viewer, *, session: int | None = None, scene: int | None = None,
               character: int | None = None, type: str | None = None, actor: int | None = None) -> DiceStats:
    """The dice of a campaign's events (optionally one session, scene, character,
    event type or actor), as ``viewer`` may see them.

    Only the few fields the visibility filter needs and the ``dice_log`` itself
    are read from the database, so a whole campaign is counted quickly."""
    envelope = Event.objects.filter(campaign=campaign)
    for name, value in (("session", session), ("scene", scene), ("actor_id", actor)):
        if value not in (None, ""):
            envelope = envelope.filter(**{name: value})
    qs = envelope.filter(payload__has_key="dice_log")
    for name, value in (("character_id", character), ("type", type)):
        if value not in (None, ""):
            qs = qs.filter(**{name: value})
    # The readers a hidden event names (HIDDEN_ROW) too: without them, a GM's decision a player reads
    # counted as sealed for her, and its dice were left out of what she sees.
    rows = qs.order_by("seq").values_list("seq", "visibility", "actor_id", "payload__dice_log", "payload__commitment",
                                          *HIDDEN_ROW.values())
    _, revealed = marks_after(campaign.id, 0)  # the one reading of which events were revealed
    events = ({"seq": seq, "visibility": vis, "actor_id": actor_id,
               "payload": {"dice_log": log, "commitment": commitment}, "shared_with": readers}
              for seq, vis, actor_id, log, commitment, readers in rows.iterator(chunk_size=5000))
    stats = count_dice(events, viewer, revealed)
    stats.hidden = _sealed_count(envelope, viewer, revealed, filtered=character not in (None, "") or
                                 type not in (None, ""))
    return stats


def _sealed_count(envelope, viewer: Viewer, revealed: set[int], filtered: bool) -> int:
    """How many events ``viewer`` receives sealed, among those the envelope filters select.

    Counted from what the placeholder shows (seq, session, scene, actor), never from
    what it hides: whether a sealed event rolled dice, its type or its character
    would each tell the viewer something about it. So a filter on character or
    type matches no sealed event."""
    if filtered:
        return 0
    # A whisper's placeholder says it is one (a message: no dice), so it is never counted.
    rows = envelope.exclude(visibility__in=("public", "whisper")).values("seq", "visibility", "actor_id", **HIDDEN_ROW)
    return sum(1 for row in rows if not may_see(row, viewer, revealed))


# --- the chart ----------------------------------------------------------------------------------

def svg_chart(die: DieStats, chart_id: str, caption: str = "") -> str:
    """Observed counts as bars and the expected count as a dashed line, as inline SVG.

    The SVG is an image with a title and a description that say everything the
    bars do (screen readers read those; a table with the same numbers sits
    beside the chart on the pages)."""
    width, height = 480, 250
    left, right, top, bottom = 40, 12, 44, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    counts, expected = die.counts, die.expected
    step, scale = _axis(max(max(counts, default=0), expected, 1))
    slot = plot_w / die.sides
    bar_w = max(1.0, slot * 0.72)

    def y(value: float) -> float:
        return top + plot_h - plot_h * value / scale

    statistic, df, p = die.test
    title = f"d{die.sides}: {die.n} dice" + (f" {caption}" if caption else "") + f", p = {format_p(p)}"
    desc = (f"Bars show how often each face of the d{die.sides} came up; the dashed line is the "
            f"{expected:.1f} rolls per face fair dice would give. "
            + "; ".join(f"face {i + 1}: {c}" for i, c in enumerate(counts))
            + f". Chi-square {statistic:.2f} with {df} degrees of freedom, p = {format_p(p)}: {die.verdict}.")
    parts = [f'<svg class="dice-chart" viewBox="0 0 {width} {height}" width="100%" role="img" '
             f'aria-labelledby="{chart_id}-title {chart_id}-desc" xmlns="http://www.w3.org/2000/svg">',
             f'<title id="{chart_id}-title">{escape(title)}</title>',
             f'<desc id="{chart_id}-desc">{escape(desc)}</desc>',
             f'<text class="chart-title" x="{left}" y="18">{escape(title)}</text>',
             f'<line class="expected" x1="{left}" x2="{left + 22}" y1="32" y2="32"/>',
             f'<text class="legend" x="{left + 28}" y="36">fair dice: {expected:.1f} per face</text>',
             f'<rect class="legend-bar" x="{left + 190}" y="26" width="12" height="12"/>',
             f'<text class="legend" x="{left + 208}" y="36">rolled</text>']
    tick = 0
    while tick <= scale + 1e-9:
        ty = y(tick)
        parts.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{ty:.1f}" y2="{ty:.1f}"/>')
        parts.append(f'<text class="tick" x="{left - 6}" y="{ty + 4:.1f}" text-anchor="end">{tick:g}</text>')
        tick += step
    label_every = 1 if die.sides <= 20 else math.ceil(die.sides / 20)
    for i, c in enumerate(counts):
        x = left + slot * i + (slot - bar_w) / 2
        parts.append(f'<rect class="bar{" off" if die.unusual else ""}" x="{x:.1f}" y="{y(c):.1f}" '
                     f'width="{bar_w:.1f}" height="{top + plot_h - y(c):.1f}">'
                     f'<title>face {i + 1}: {c} (fair: {expected:.1f})</title></rect>')
        if (i + 1) % label_every == 0 or i == 0:
            parts.append(f'<text class="tick" x="{left + slot * i + slot / 2:.1f}" y="{top + plot_h + 15}" '
                         f'text-anchor="middle">{i + 1}</text>')
    ey = y(expected)
    parts.append(f'<line class="expected" x1="{left}" x2="{width - right}" y1="{ey:.1f}" y2="{ey:.1f}"/>')
    parts.append(f'<line class="axis" x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}"/>')
    parts.append(f'<text class="axis-label" x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle">'
                 f'face</text>')
    parts.append("</svg>")
    return "".join(parts)


def _axis(peak: float) -> tuple[float, float]:
    """A tick step (1, 2 or 5 times a power of ten, at least 1) and the axis top, for at most 5 steps."""
    step = 1.0
    while peak / step > 5:
        for factor in (2, 2.5, 2):  # 1 -> 2 -> 5 -> 10 -> 20 -> 50 ...
            step *= factor
            if peak / step <= 5:
                break
    return step, max(step, math.ceil(peak / step) * step)
