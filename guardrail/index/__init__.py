"""The code index: Chroma collections of function-level snippets, and how code gets into them.

    >>> from guardrail.index import CodeIndex, split_tree
    >>> index = CodeIndex("my-project")                       # doctest: +SKIP
    >>> tree = split_tree("src/")                             # doctest: +SKIP
    >>> index.replace_files(tree.files)                       # doctest: +SKIP
    >>> index.search("parse an ISO date", k=5)                # doctest: +SKIP
    >>> [s.qualified_name for s in index.snippets()]          # doctest: +SKIP

This package is the only part of guardrail that imports ``chromadb``; importing it costs about
half a second, so ``import guardrail`` does not import it. Embedding models load on first use.
"""

from guardrail.index.code_index import AddReport, CodeIndex, ProgressHook, default_index_path
from guardrail.index.doctests import DoctestTests, doctest_tests
from guardrail.index.embeddings import (
    SentenceTransformerEmbedding,
    chroma_default_embedding,
    load_embedding,
    minilm_embedding,
    sentence_transformer_embedding,
)
from guardrail.index.errors import (
    ChromaUnavailableError,
    CodeIndexError,
    CollectionNameError,
    EmbeddingModelError,
    IndexNotFoundError,
    SourceFileError,
)
from guardrail.index.paths import TEST_GLOBS
from guardrail.index.snippet import Snippet, decode_metadata
from guardrail.index.splitter import (
    SkippedFile,
    SkipReport,
    TreeSplit,
    split_python_file,
    split_python_source,
    split_tree,
)
from guardrail.index.stored import StoredCheck, stored_summary, verify_stored

__all__ = [
    "TEST_GLOBS",
    "AddReport",
    "ChromaUnavailableError",
    "CodeIndex",
    "CodeIndexError",
    "CollectionNameError",
    "DoctestTests",
    "EmbeddingModelError",
    "IndexNotFoundError",
    "ProgressHook",
    "SentenceTransformerEmbedding",
    "SkipReport",
    "SkippedFile",
    "Snippet",
    "SourceFileError",
    "StoredCheck",
    "TreeSplit",
    "chroma_default_embedding",
    "decode_metadata",
    "default_index_path",
    "doctest_tests",
    "load_embedding",
    "minilm_embedding",
    "sentence_transformer_embedding",
    "split_python_file",
    "split_python_source",
    "split_tree",
    "stored_summary",
    "verify_stored",
]
