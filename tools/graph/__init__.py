"""Knowledge graphs: the data model, document ingestion, storage, vectors, queries and sampling."""

from typing import TYPE_CHECKING, Any

from .model import Edge, EdgeType, GraphMeta, KnowledgeGraph, Node, NodeType, Source
from .sampling import SampleSpec, k_hop, sample_document_subgraph

if TYPE_CHECKING:
    from .service import GraphService


def __getattr__(name: str) -> Any:
    """``GraphService`` on first use: it pulls in BM25 and scipy, which light commands (``taskloom gc``) never need."""
    if name == "GraphService":
        from .service import GraphService

        return GraphService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "Edge",
    "EdgeType",
    "GraphMeta",
    "GraphService",
    "KnowledgeGraph",
    "Node",
    "NodeType",
    "SampleSpec",
    "Source",
    "k_hop",
    "sample_document_subgraph",
]
