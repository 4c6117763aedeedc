"""tfperf doctor: the GPU-chain self-check, offline install planner and error-log explainer."""
