"""A loopback server that plays search agents with the habits SFT data must not teach, each answering
right in the end: one that guesses without seeing the answer, one that repeats a search, one that
names an entity no result had shown, and one that solves properly.

It answers in any dialect the competent server knows (`CompetentServer`), and follows a plan per
question (`plan`): the searches it makes, in order, then its answer. Questions it has no plan for
it answers as the competent server does.
"""

from competent_server import CompetentServer, _offers, _thinking


class HabitsServer(CompetentServer):
    def __init__(self, dialect: str = "vllm", **options):
        super().__init__(dialect, **options)
        self.plans: dict[str, tuple[list[str], str]] = {}

    def plan(self, question: str, searches: list[str], answer: str) -> None:
        """Searches `searches` in order for `question`, then answers `answer`."""
        question = " ".join(question.split())
        self.known[question] = (answer, len(searches))
        self.plans[question] = (searches, answer)

    def _decide(self, request: dict, index: int) -> tuple[str, dict]:
        messages = request["messages"]
        position, question = self._question(messages)
        if question not in self.plans:
            return super()._decide(request, index)
        searches, answer = self.plans[question]
        done = sum(
            m["role"] == "tool" or (m.get("content") or "").startswith("<tool_response>")
            for m in messages[position + 1 :]
        )
        thinking = _thinking(self.reasoning_words)
        if done < len(searches):
            return thinking, {"call": "search", "arguments": {"query": searches[done]}}
        if _offers(request, "answer"):
            return thinking, {"call": "answer", "arguments": {"answer": answer}}
        return thinking, {"say": f"<answer>{answer}</answer>"}
