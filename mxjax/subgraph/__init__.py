"""Graph partitioning (``mx.subgraph``): subgraph properties, backends and the partitioner."""
from .partition import find_groups, partition, subgraph_inputs
from .property import (SubgraphProperty, SubgraphSelector, backend_options, get_backend, list_backends,
                       register_backend)

__all__ = ["SubgraphSelector", "SubgraphProperty", "register_backend", "get_backend", "list_backends",
           "backend_options", "partition", "find_groups", "subgraph_inputs"]
