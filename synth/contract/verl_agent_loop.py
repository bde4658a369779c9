"""A verl agent loop that shapes each request by the context policy synth's teacher ran under:
`archive` (old tool results as stubs the agent can reopen) or `summarize` (the same model summarizes
the earlier work past a token threshold, as ReSum does).

Not imported by synth: `synth export --format verl` copies this file next to the Parquet as
`synth_verl_agent_loop.py` when the version's teacher ran under a policy, with `agent_loop.yaml`
(this class and the policy's settings) and rows whose `agent_name` is `synth_context_agent`. The
rules are `synth_contract.py`'s (synth/contract/portable.py), the functions synth's own agents use,
so an RL rollout sees its history exactly as the SFT rollouts did.

A policy rewrites earlier turns, so what the model saw at one turn is not a prefix of what it sees
at the next: one token sequence cannot hold the rollout. The loop returns one `AgentLoopOutput` per
context segment (a segment ends where the view stops growing by appending), which verl's V1 trainer
(`trainer.use_v1=true`, the default since verl 0.9) trains as one session: every segment gets the
final reward, and GRPO's advantage is computed over the sessions' final segments and given to all
of a session's segments. The summarizing requests are not trained. Needs verl >= 0.9.1 (its agent
loops render every prompt from the message list).

Each segment's response is capped by `rollout.response_length` as verl caps a whole rollout; the
turn budget (`multi_turn.max_assistant_turns`) counts every segment's turns.
"""

import sys
from typing import Any
from uuid import uuid4

import synth_contract
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, register
from verl.experimental.agent_loop.tool_agent_loop import AgentData, AgentState, ToolAgentLoop

POLICIES = ("none", "archive", "summarize")


@register("synth_context_agent")
class SynthContextAgentLoop(ToolAgentLoop):
    """verl's tool agent loop, with each request's messages shaped by the context policy."""

    def __init__(
        self,
        *args,
        context: str = "none",
        keep_results: int | None = None,
        summarize_at: int | None = None,
        summary_tokens: int = 512,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        if context not in POLICIES:
            raise ValueError(f"agent_loop.yaml: context {context!r} is not one of {', '.join(POLICIES)}")
        if context != "none" and not self.config.trainer.get("use_v1", False):
            raise ValueError(
                f"the {context} context policy trains one sequence per context segment, which only verl's V1 "
                "trainer takes; drop trainer.use_v1=false (V1 is the default since verl 0.9)"
            )
        if not hasattr(self, "ct_build_initial_tokens") or not getattr(self, "enable_continuous_token", True):
            # the loop rebuilds each view from the message list, which verl keeps whole only on its
            # continuous-token path (the only one from 0.9.1 on; data.continuous_token.enable in 0.9.0)
            raise ValueError(
                "synth_verl_agent_loop needs verl >= 0.9.1, or 0.9.0 with data.continuous_token.enable=true"
            )
        self.context = context
        self.keep = (0 if context == "summarize" else 4) if keep_results is None else int(keep_results)
        self.summarize_at = int(summarize_at or 8192)
        self.summary_tokens = int(summary_tokens)
        self.trace: list[dict] = []
        """Every message of the rollout, whatever the views showed."""
        self.summaries: list[str] = []
        self.summarized = 0
        self.signature: tuple = ()
        """What the current segment's view is: a view with another signature starts a segment."""
        self.segments: list[AgentLoopOutput] = []
        self.context_tokens = 0
        """The last request's prompt and completion tokens (what `summarize_at` is compared with)."""

    async def run(self, sampling_params: dict[str, Any], **kwargs) -> AgentLoopOutput | list[AgentLoopOutput]:
        final = await super().run(sampling_params, **kwargs)
        if not self.segments:
            return final
        return [*self.segments, final]

    async def _handle_pending_state(self, agent_data: AgentData, sampling_params: dict[str, Any]) -> AgentState:
        self.trace = list(agent_data.messages)
        self.signature = self._view()[1]
        return await super()._handle_pending_state(agent_data, sampling_params)

    async def _handle_generating_state(
        self, agent_data: AgentData, sampling_params: dict[str, Any], ignore_termination: bool = False
    ) -> AgentState:
        before = len(agent_data.messages)
        state = await super()._handle_generating_state(agent_data, sampling_params, ignore_termination)
        self.context_tokens = len(agent_data.prompt_ids)
        turn = agent_data.messages[before:]  # the assistant turn, unless a budget ended the loop first
        if not turn and agent_data.response_ids:  # (verl stops reading a turn that spends the last budget)
            turn = [{"role": "assistant", "content": self.tokenizer.decode(agent_data.response_ids).strip()}]
        self.trace.extend(turn)
        return state

    async def _handle_processing_tools_state(self, agent_data: AgentData) -> AgentState:
        if self.context == "none":
            return await super()._handle_processing_tools_state(agent_data)
        before, answered = len(agent_data.messages), len(agent_data.response_mask)
        cap, self.response_length = self.response_length, sys.maxsize  # the segment decides the cap below
        try:
            state = await super()._handle_processing_tools_state(agent_data)
        finally:
            self.response_length = cap
        self.trace.extend(agent_data.messages[before:])
        if state != AgentState.GENERATING:
            return state
        if self.context == "summarize" and self.context_tokens > self.summarize_at:
            await self._summarize()
        view, signature = self._view()
        if signature == self.signature:
            return AgentState.TERMINATED if len(agent_data.response_mask) >= cap else state
        await self._next_segment(agent_data, view, signature, answered)
        return state

    def _view(self) -> tuple[list[dict], tuple]:
        """The messages the next request shows, and its signature."""
        if self.context == "archive":
            shown, archived = synth_contract.archived_messages(self.trace, self.keep)
            return shown, ("archive", tuple(archived))
        if self.summaries:
            shown = synth_contract.summarized_messages(self.trace, self.summaries[-1], self.summarized)
            return shown, ("summary", len(self.summaries))
        return list(self.trace), ("none",)

    async def _next_segment(self, agent_data: AgentData, view: list[dict], signature: tuple, answered: int) -> None:
        """Close the segment at its last generated turn (the new results open the next one) and start
        the next from `view`, rendered whole."""
        self.segments.append(self._segment_output(agent_data, answered))
        schemas = getattr(agent_data, "_active_tool_schemas", self.tool_schemas)
        agent_data.messages = list(view)
        agent_data.prompt_ids = await self.ct_build_initial_tokens(agent_data.messages, tools=schemas)
        agent_data.response_mask, agent_data.response_logprobs = [], []
        agent_data.routed_experts = None
        agent_data.request_id = uuid4().hex  # a new prefix: no cache to stick to
        self.signature = signature

    def _segment_output(self, agent_data: AgentData, answered: int) -> AgentLoopOutput:
        """The segment so far as verl's output, without the tool results appended after its last turn."""
        start = len(agent_data.prompt_ids) - len(agent_data.response_mask)
        response = agent_data.prompt_ids[start : start + answered][: self.response_length]
        return AgentLoopOutput(
            prompt_ids=agent_data.prompt_ids[:start],
            response_ids=response,
            response_mask=agent_data.response_mask[: len(response)],
            response_logprobs=agent_data.response_logprobs[: len(response)] if agent_data.response_logprobs else None,
            multi_modal_data={},
            num_turns=agent_data.user_turns + agent_data.assistant_turns + 1,
            metrics=dict(agent_data.metrics),
            extra_fields={**agent_data.extra_fields, "turn_scores": [], "tool_rewards": []},
        )

    async def _summarize(self) -> None:
        """The same model's summary of the work before the latest `keep` results (ReSum), when there is
        new work to fold in; an empty summary leaves the context as it was."""
        roles = [message["role"] for message in self.trace]
        cut = synth_contract.summary_cut(roles, [bool(m.get("tool_calls")) for m in self.trace], self.keep)
        if cut <= max(self.summarized, synth_contract.PROMPT_MESSAGES):
            return
        work = synth_contract.summary_work(self.trace, self.summaries, self.summarized, cut)
        prompt_ids = await self.ct_build_initial_tokens(synth_contract.summary_request(work))
        output = await self.server_manager.generate(
            request_id=uuid4().hex,
            prompt_ids=prompt_ids,
            sampling_params={"temperature": 0.0, "top_p": 1.0, "top_k": -1, "max_tokens": self.summary_tokens},
        )
        text = self.tokenizer.decode(output.token_ids, skip_special_tokens=True).strip()
        if text:
            self.summaries.append(text)
            self.summarized = cut
