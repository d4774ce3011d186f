"""Refusing every node that cannot be compiled at once, in one line grouped by op.

    aotc: error: 5 nodes are not supported: Det x3 (det1, det2, det3), Bernoulli x2 (mask, mask_2)

A group is one op with one reason; the reason follows the group's node names when there is one
("MatMul (mm): dtype int32 is not supported ..."), and groups are then separated by "; ".
A single node is refused in the one-node form every other refusal takes:

    aotc: error: node 'mask' (Bernoulli): operator is not supported by the host C generator
"""

from __future__ import annotations

from aot.errors import AotcError
from aot.ir import Node

NO_KERNEL = "operator is not supported by the host C generator"


class UnsupportedNodes(AotcError):
    """The nodes that cannot be compiled. `refused`: each (node, reason), in graph order; reason
    None where nothing implements the op at all."""

    def __init__(self, refused: list[tuple[Node, str | None]]):
        self.refused = refused
        if len(refused) == 1:
            node, reason = refused[0]
            super().__init__(reason or NO_KERNEL, node=node)
        else:
            super().__init__(unsupported_line(refused))

    @property
    def ops(self) -> list[str]:
        """The refused ops, each once, in order of first appearance."""
        return list(dict.fromkeys(n.op for n, _ in self.refused))


def unsupported_line(refused: list[tuple[Node, str | None]]) -> str:
    groups: dict[tuple[str, str | None], list[str]] = {}
    for node, reason in refused:
        groups.setdefault((node.op, reason), []).append(node.name)
    parts = []
    for (op, reason), names in groups.items():
        count = f" x{len(names)}" if len(names) > 1 else ""
        parts.append(f"{op}{count} ({', '.join(names)})" + (f": {reason}" if reason else ""))
    n = len(refused)
    head = f"{n} node is not supported" if n == 1 else f"{n} nodes are not supported"
    return f"{head}: {('; ' if any(r for _, r in refused) else ', ').join(parts)}"
