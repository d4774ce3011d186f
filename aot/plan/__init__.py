"""Memory planning: liveness over the execution order -> one arena with an offset per tensor."""

from aot.plan.planner import ALIGNMENT, BudgetError, Buffer, OpMemory, Plan, assert_no_overlap, plan_memory

__all__ = ["ALIGNMENT", "Buffer", "BudgetError", "OpMemory", "Plan", "assert_no_overlap", "plan_memory"]
