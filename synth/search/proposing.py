"""The proposing task of the search agent (self-play's proposer): its system prompts, its finishing
tool and a worked demonstration. It lives beside the answering task (`synth.search.agent.ANSWERING`)
because the store's exports render it too (`--role proposer`), and the store sits below generators.
"""

from synth.search.agent import AgentTask, Demonstration

PROPOSE_SCHEMA = {
    "type": "function",
    "function": {
        "name": "propose",
        "description": "Give the finished question and stop. It must not contain the target answer.",
        "parameters": {
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "One question whose only answer is the target."}
            },
            "required": ["question"],
        },
    },
}

PROPOSER_SYSTEM = (
    "You write hard quiz questions by searching a collection of documents.\n{tools}\n"
    "Search results come back inside <tool_response> tags. One call per reply.\n"
    "Never write the target answer in a search or in the question. After your searches, reply with "
    "<question>the question</question>: one question whose only answer is the target, built from facts you found."
)
PROPOSER_NATIVE_SYSTEM = (
    "You write hard quiz questions by searching a collection of documents with the tools you are given. "
    "Never use the target answer in a search or in the question. After your searches, call `propose` with one "
    "question whose only answer is the target, built from facts you found."
)
PROPOSER_DEMONSTRATION = Demonstration(
    task="Target answer: Grey Harbour\nWhat the collection says about it: Grey Harbour is a drama film directed by "
    "Mira Olsen.\n"
    "Make 2 different searches, then write the question.",
    searches=(
        (
            "Mira Olsen director",
            (
                {
                    "id": "demo#1",
                    "title": "Mira Olsen",
                    "text": "Mira Olsen was born in Norway. Mira Olsen directed Grey Harbour.",
                },
            ),
        ),
        (
            "drama film by a director born in Norway",
            ({"id": "demo#2", "title": "Norway", "text": "Norway is a country in Europe."},),
        ),
    ),
    result="Which drama film was directed by a woman born in Norway?",
)
"""A worked proposal about invented entities: small models copy the call format from it. Request only."""
PROPOSING = AgentTask(
    PROPOSER_SYSTEM,
    PROPOSER_NATIVE_SYSTEM,
    "question",
    PROPOSE_SCHEMA,
    prompt_prefix="",
    demonstration=PROPOSER_DEMONSTRATION,
)
