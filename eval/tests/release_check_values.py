"""Published figures of the ExecRetrieval release that several tests check against."""

# results/google__gemini-embedding-2 as printed in the release's results/README.md
GEMINI_EMBEDDING_2 = {
    "exec@1": 0.3312, "precision@1": 0.3312, "ndcg@1": 0.3312, "exec_ndcg_gap@1": 0.0,
    "exec@3": 0.8232, "precision@3": 0.2744, "ndcg@3": 0.6142, "exec_ndcg_gap@3": 0.209,
    "exec@5": 0.9968, "precision@5": 0.1994, "ndcg@5": 0.6869, "exec_ndcg_gap@5": 0.3099,
    "exec@10": 1.0, "precision@10": 0.1, "ndcg@10": 0.6879, "exec_ndcg_gap@10": 0.3121,
}  # fmt: skip
