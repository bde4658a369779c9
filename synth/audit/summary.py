"""An audit's figures: per style (and overall), the good / ok / bad counts and the shares of right,
only and bad with their Wilson 95% intervals (30 items give about +-15 points at 50%: the interval
is part of the figure, never left off), and the calibration of the construction's world estimate:
of the items it called unique (estimated answers at most 1), the share readers found unique.

Bad is also given among the items whose stored answer the reader found right ("bad, answer
right"): a wrong fact in the graph makes an item bad whatever the construction does, so this is the
construction's own share (a second answer, a vague cue), read next to the share resting on a wrong
fact (1 - right). On FB15k-237 about 1 item in 10 rests on a fact readers deny (docs/audit.md)."""

from collections import defaultdict

from synth.evaluation.report import wilson
from synth.schemas import AuditRating

ALL = "all"


def share(hits: int, of: int) -> dict:
    """{hits, of, share, ci95}: a proportion with its Wilson interval (share None when of is 0)."""
    return {
        "hits": hits,
        "of": of,
        "share": round(hits / of, 4) if of else None,
        "ci95": list(wilson(hits, of)) if of else None,
    }


def figures(ratings: list[AuditRating]) -> dict:
    """The figures of one group of ratings."""
    said_right = [rating.answer_right for rating in ratings if rating.answer_right is not None]
    said_only = [rating.only_answer for rating in ratings if rating.only_answer is not None]
    counts = {label: sum(rating.rating == label for rating in ratings) for label in ("good", "ok", "bad")}
    called_unique = [
        rating.only_answer
        for rating in ratings
        if rating.only_answer is not None and rating.world_answers is not None and rating.world_answers <= 1
    ]
    bad_when_right = [rating.rating == "bad" for rating in ratings if rating.answer_right]
    return {
        "items": len(ratings),
        **counts,
        "right": share(sum(said_right), len(said_right)),
        "only": share(sum(said_only), len(said_only)),
        "bad_share": share(counts["bad"], len(ratings)),
        "bad_when_right": share(sum(bad_when_right), len(bad_when_right)),
        "estimate_confirmed": share(sum(called_unique), len(called_unique)),
    }


def summarize(ratings: list[AuditRating]) -> dict:
    """{"all": figures, "by_style": {style: figures}, "by_hops": {hops: figures}}."""
    by_style: dict[str, list[AuditRating]] = defaultdict(list)
    by_hops: dict[str, list[AuditRating]] = defaultdict(list)
    for rating in ratings:
        by_style[rating.style or "unknown"].append(rating)
        by_hops[str(rating.hops) if rating.hops is not None else "unknown"].append(rating)
    return {
        ALL: figures(ratings),
        "by_style": {style: figures(group) for style, group in sorted(by_style.items())},
        "by_hops": {hops: figures(group) for hops, group in sorted(by_hops.items(), key=lambda pair: pair[0])},
    }
