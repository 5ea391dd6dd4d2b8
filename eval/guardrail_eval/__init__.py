"""guardrail-eval: replay ExecRetrieval-style pools with and without the guardrail gate."""
