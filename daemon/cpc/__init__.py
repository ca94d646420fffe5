"""Pure completion algorithm (stdlib + numpy only): byte vocabulary index,
stable/unstable split, coverage beam search and continuation.

The public entry point is :class:`daemon.cpc.beam.Decoder`; it is written
against the :class:`daemon.cpc.lm.TokenLM` protocol so it can be tested with
scripted logits and run on any backend.
"""
