"""Memory planning: liveness over the execution order -> one arena with an offset per tensor."""

from aot.plan.planner import ALIGNMENT, Buffer, OpMemory, Plan, assert_no_overlap, plan_memory

__all__ = ["ALIGNMENT", "Buffer", "OpMemory", "Plan", "assert_no_overlap", "plan_memory"]
