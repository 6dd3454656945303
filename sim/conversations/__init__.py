"""Real conversations (LongMemEval, LoCoMo, native JSONL with turn ids) through every design (issue 28)."""

from sim.conversations.samples import SAMPLES, sample_kind, sample_path

__all__ = ["SAMPLES", "sample_kind", "sample_path"]
