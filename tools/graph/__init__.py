"""Knowledge graphs: the data model, document ingestion, storage, vectors, queries and sampling."""

from .model import Edge, EdgeType, GraphMeta, KnowledgeGraph, Node, NodeType, Source
from .sampling import SampleSpec, k_hop, sample_document_subgraph
from .service import GraphService

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
