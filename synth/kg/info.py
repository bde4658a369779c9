"""`synth kg info`: what a knowledge graph holds, at a glance (sizes, degrees, relations, hubs)."""

import numpy as np

from synth.kg.graph import KnowledgeGraph

DEGREE_BUCKETS = [(1, 1), (2, 4), (5, 16), (17, 64), (65, 256), (257, 1024), (1025, None)]


def graph_info(kg: KnowledgeGraph, top: int = 15) -> dict:
    degrees = kg.degrees
    relation_counts = np.diff(kg.out_index.run_start)
    per_relation = np.bincount(kg.out_index.run_rel, weights=relation_counts, minlength=len(kg.relation_ids)).astype(
        np.int64
    )
    order = np.argsort(-per_relation, kind="stable")
    hubs = np.argsort(-degrees, kind="stable")[:top]
    buckets = []
    for low, high in DEGREE_BUCKETS:
        mask = (degrees >= low) if high is None else ((degrees >= low) & (degrees <= high))
        buckets.append(
            {
                "degree": f"{low}+" if high is None else (str(low) if low == high else f"{low}-{high}"),
                "entities": int(mask.sum()),
            }
        )
    percentiles = {f"p{q}": float(np.percentile(degrees, q)) for q in (50, 90, 99)} if len(degrees) else {}
    return {
        "snapshot": kg.snapshot,
        "entities": kg.num_nodes,
        "named_entities": int(kg.named.sum()),
        "triples": kg.num_triples,
        "relations": len(kg.relation_ids),
        "degree": {
            "min": int(degrees.min()) if len(degrees) else 0,
            **percentiles,
            "max": int(degrees.max()) if len(degrees) else 0,
            "mean": round(float(degrees.mean()), 2) if len(degrees) else 0.0,
        },
        "degree_histogram": buckets,
        "top_relations": [
            {
                "relation": kg.relation_ids[index],
                "triples": int(per_relation[index]),
                "forward": kg.relations[kg.relation_ids[index]].forward
                if kg.relation_ids[index] in kg.relations
                else None,
            }
            for index in order[:top]
        ],
        "hubs": [
            {"id": kg.node_ids[index], "name": kg.name(kg.node_ids[index]), "degree": int(degrees[index])}
            for index in hubs
        ],
        "adjacency_mib": round(kg.nbytes / 2**20, 1),
    }
