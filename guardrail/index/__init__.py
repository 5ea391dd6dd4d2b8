"""The code index: Chroma collections of function-level snippets, and how code gets into them.

    >>> from guardrail.index import CodeIndex, split_tree
    >>> index = CodeIndex("my-project")                       # doctest: +SKIP
    >>> tree = split_tree("src/")                             # doctest: +SKIP
    >>> index.replace_files(tree.files)                       # doctest: +SKIP
    >>> index.search("parse an ISO date", k=5)                # doctest: +SKIP

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
    EmbeddingModelError,
    SourceFileError,
)
from guardrail.index.snippet import Snippet, decode_metadata
from guardrail.index.splitter import (
    SkippedFile,
    SkipReport,
    TreeSplit,
    split_python_file,
    split_python_source,
    split_tree,
)

__all__ = [
    "AddReport",
    "ChromaUnavailableError",
    "CodeIndex",
    "CodeIndexError",
    "DoctestTests",
    "EmbeddingModelError",
    "ProgressHook",
    "SentenceTransformerEmbedding",
    "SkipReport",
    "SkippedFile",
    "Snippet",
    "SourceFileError",
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
]
