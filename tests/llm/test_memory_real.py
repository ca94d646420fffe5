"""The memory of the user's words on the real SmolLM2, wired as the daemon wires it
(:func:`daemon.memory.cache_lm.decoder_with_memory`): a name the model cannot know is completed mid-word
once the memory holds it, and a memory of another author's code takes none of the model's own suggestions
away."""

from __future__ import annotations

import configparser
import inspect
import pathlib

from daemon.cpc.beam import Decoder
from daemon.cpc.suggestion import BeamParams
from daemon.memory.cache_lm import decoder_with_memory
from daemon.memory.store import Memory

EARLIER = [
    "Welcome to the team! Your mentor for the first month is Quillon Barthwaite-Oduya, who runs the storage group.",
    "Thanks for the notes. I will ask Quillon Barthwaite-Oduya about the quota change before Friday.",
]
TYPED = "The quota request is ready. I sent it to Quillon Bart"

#: code typed with a memory of another author's code (the standard library's configparser, 55,000 characters)
CODE = ("def read_config(path):\n    with open(path) as handle:\n        return json.load(handle)\n\n"
        "def write_config(path, config):\n    with open(path, \"w\") as handle:\n        json.dump(config, handle)\n")


def test_a_remembered_name_is_completed_from_a_prefix_typed_mid_word(smol_lm):
    params = BeamParams()
    alone = Decoder(smol_lm).complete(TYPED, params)
    assert not alone.text.startswith("hwaite")  # the model alone cannot know the name
    memory = Memory()
    memory.extend(EARLIER)
    decoder = decoder_with_memory(smol_lm, memory, background=False)
    s = decoder.complete(TYPED, params)
    assert s.text.startswith("hwaite"), s.text
    assert not s.suppressed and not s.plain  # the confidence gate, judging the mixed probabilities, shows it
    # and the model's own rows come back once the memory is forgotten
    memory.clear()
    assert decoder.complete(TYPED, params).text == alone.text


def test_an_unrelated_memory_takes_none_of_the_models_own_suggestions_away(smol_lm):
    """At every caret position of a short piece of code, wherever the model alone shows a suggestion, the model
    with a memory of unrelated prose shows one too (the mixed one, or the model's own where the gate would
    withhold the mixed one), and at some position the model's own is what it shows (without the second
    opinion, five suggestions the model alone shows were withheld here)."""
    params = BeamParams()
    memory = Memory()
    memory.extend([pathlib.Path(inspect.getfile(configparser)).read_text(encoding="utf-8")])
    alone_decoder = Decoder(smol_lm)
    decoder = decoder_with_memory(smol_lm, memory, background=False)
    plain = 0
    for end in range(12, len(CODE) + 1, 2):
        alone = alone_decoder.complete(CODE[:end], params)
        s = decoder.complete(CODE[:end], params)
        if alone.visible:
            assert s.visible, (CODE[:end], alone.text, s.text)
        if s.plain:
            assert (s.text, s.confidence) == (alone.text, alone.confidence)
            plain += 1
    assert plain >= 1
