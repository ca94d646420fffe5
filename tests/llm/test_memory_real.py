"""The memory of the user's words on the real SmolLM2: a name the model
cannot know is completed mid-word once the memory holds it."""

from __future__ import annotations

from daemon.cpc.beam import Decoder
from daemon.cpc.suggestion import BeamParams
from daemon.memory.cache_lm import MemoryLM
from daemon.memory.store import Memory

EARLIER = [
    "Welcome to the team! Your mentor for the first month is Quillon Barthwaite-Oduya, who runs the storage group.",
    "Thanks for the notes. I will ask Quillon Barthwaite-Oduya about the quota change before Friday.",
]
TYPED = "The quota request is ready. I sent it to Quillon Bart"


def test_a_remembered_name_is_completed_from_a_prefix_typed_mid_word(smol_lm):
    params = BeamParams()
    alone = Decoder(smol_lm).complete(TYPED, params)
    assert not alone.text.startswith("hwaite")  # the model alone cannot know the name
    memory = Memory()
    memory.extend(EARLIER)
    lm = MemoryLM(smol_lm, memory, background=False)
    s = Decoder(lm).complete(TYPED, params)
    assert s.text.startswith("hwaite"), s.text
    assert not s.suppressed  # the confidence gate, judging the mixed probabilities, shows it
    # and the model's own rows come back once the memory is forgotten
    memory.clear()
    assert Decoder(lm).complete(TYPED, params).text == alone.text
