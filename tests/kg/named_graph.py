"""A small graph from triples whose nodes are named by their ids: what the world-estimate tests build."""

from synth.kg.graph import KnowledgeGraph
from synth.schemas import Entity, Relation, Triple


def named_graph(triples: list[Triple], name: str, relations: dict[str, Relation] | None = None) -> KnowledgeGraph:
    """The graph of `triples`, each node named by its id (path separators read as spaces)."""
    nodes = {node for triple in triples for node in (triple.head, triple.tail)}
    entities = {node: Entity(id=node, name=node.strip("/").replace("/", " ")) for node in nodes}
    return KnowledgeGraph.from_triples(triples, entities, relations or {}, name)
