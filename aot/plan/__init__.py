"""Memory planning: liveness over the execution order -> one arena with an offset per tensor."""

from aot.plan.buffers import ALIGNMENT, Buffer, Plan
from aot.plan.placement import assert_no_overlap
from aot.plan.planner import BudgetError, OpMemory, plan_memory

__all__ = ["ALIGNMENT", "Buffer", "BudgetError", "OpMemory", "Plan", "assert_no_overlap", "plan_memory"]
