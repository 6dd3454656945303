"""Real conversations (LongMemEval, LoCoMo, native JSONL with turn ids) through every design (issue 28)."""
