"""The served benchmark's CPU proxy for a large-vocabulary model: two layers
of random weights with Qwen2.5's real 151,936-token vocabulary, so a server
spends almost nothing on the model and what it spends per token over the
whole vocabulary (sampling, grammar, log-probabilities) shows.

The tokenizer comes from llama.cpp's vocabulary-only ``ggml-vocab-qwen2.gguf``
(in the llama-cpp-python sdist; ``.ci/llama-cpp`` keeps a copy beside the
server it builds); the file is written with the ``gguf`` package.

    python -m tests.llm.proxy_model VOCAB.gguf OUT.gguf
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

VOCAB_FILE = "ggml-vocab-qwen2.gguf"


def write_proxy(vocab: pathlib.Path, out: pathlib.Path, n_layer: int = 2, n_embd: int = 64, n_head: int = 4,
                n_ff: int = 128, seed: int = 0) -> pathlib.Path:
    """Write the proxy model to ``out`` (the tokenizer of ``vocab``, random weights)."""
    import gguf

    reader = gguf.GGUFReader(str(vocab))
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    n_vocab = len(tokens)
    writer = gguf.GGUFWriter(str(out), "qwen2")
    writer.add_name("qwen2-vocab-proxy")
    writer.add_context_length(4096)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_freq_base(1_000_000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model(reader.fields["tokenizer.ggml.model"].contents())
    writer.add_tokenizer_pre(reader.fields["tokenizer.ggml.pre"].contents())
    writer.add_token_list(tokens)
    writer.add_token_types(reader.fields["tokenizer.ggml.token_type"].contents())
    writer.add_token_merges(reader.fields["tokenizer.ggml.merges"].contents())
    for key, add in (("eos", writer.add_eos_token_id), ("bos", writer.add_bos_token_id),
                     ("padding", writer.add_pad_token_id)):
        field = reader.fields.get(f"tokenizer.ggml.{key}_token_id")
        if field is not None:
            add(int(field.contents()))
    rng = np.random.default_rng(seed)

    def weights(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    writer.add_tensor("token_embd.weight", weights(n_vocab, n_embd, scale=1.0).astype(np.float16))
    writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    for i in range(n_layer):
        writer.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        for name in ("q", "k", "v"):
            writer.add_tensor(f"blk.{i}.attn_{name}.weight", weights(n_embd, n_embd))
            writer.add_tensor(f"blk.{i}.attn_{name}.bias", weights(n_embd))
        writer.add_tensor(f"blk.{i}.attn_output.weight", weights(n_embd, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"blk.{i}.ffn_gate.weight", weights(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_up.weight", weights(n_ff, n_embd))
        writer.add_tensor(f"blk.{i}.ffn_down.weight", weights(n_embd, n_ff))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m tests.llm.proxy_model VOCAB.gguf OUT.gguf")
    print(write_proxy(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])))
