"""Each MerchantBench claim's workload and driver (a strategy, its example type, a check), next to the
properties they feed: :mod:`.context` for the ReAct loop's context claims, :mod:`.documents` for the
memory document tools; :mod:`.common` holds the shared set-up."""

from systems.merchantbench.drivers import common, context, documents

__all__ = ["common", "context", "documents"]
