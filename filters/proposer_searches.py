"""Self-play proposal gates (SSP's rule-based checks on the proposer's trajectory): the target
answer must not appear in any search query (a proposer that searched for the answer by name
found nothing but the answer's own page), and the proposer must have made more than one distinct
search (one search is one hop: no deep-search question).

Reads `metadata.proposer` of items made by `synth.generators.selfplay`. The answer in the question
itself is the leakage filter's job (`answer_in_question`).
"""

from typing import Literal

from pydantic import Field

from synth.contract.matching import mentions, normalize_answer
from synth.filters.base import CheckResult, Filter
from synth.filters.checks import CheckConfig, CheckScope
from synth.schemas import Item


class ProposerSearchesConfig(CheckConfig):
    kind: Literal["proposer_searches"] = "proposer_searches"
    summary = "A proposed question: no search named its answer, and enough distinct searches were made."
    min_distinct: int = Field(
        default=2, ge=1, description="Distinct searches a proposer must have made (SSP: more than one)."
    )

    def build(self, scope: CheckScope) -> "ProposerSearchFilter":
        return ProposerSearchFilter(self.min_distinct)


class ProposerSearchFilter(Filter):
    name = "proposer_searches"

    def __init__(self, min_distinct_searches: int = 2):
        self.min_distinct_searches = min_distinct_searches

    def check(self, item: Item) -> CheckResult:
        queries = item.metadata.get("proposer", {}).get("queries", [])
        for query in queries:
            for answer in item.answers:
                if mentions(query, answer):
                    return False, "answer_in_search_query", {"query": query, "leaked": answer}
        distinct = len({normalize_answer(query) for query in queries} - {""})
        if distinct < self.min_distinct_searches:
            return False, "too_few_searches", {"distinct_searches": distinct, "required": self.min_distinct_searches}
        return True
