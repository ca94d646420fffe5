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


def test_the_daemon_shows_the_rest_of_a_phrase_the_memory_is_sure_of_where_the_model_shows_nothing():
    from daemon.config import Config
    from daemon.memory.history import HistoryCompleter
    from daemon.runtime import make_decoder_factory

    memory = Memory()
    memory.extend(EARLIER)
    decoder = make_decoder_factory(Config(), memory=memory)()
    try:
        assert isinstance(decoder, HistoryCompleter)
        params = BeamParams()
        typed = "Thanks for the notes. I will ask Quillon Barth"
        assert decoder.inner.complete(typed, params).visible == ""  # the model, the memory mixed in, withholds
        s = decoder.complete(typed, params)
        assert (s.visible, decoder.answered) == ("waite-Oduya about the quota change before Friday.", 1)
        # where the model shows a suggestion (the name, from the mixed probabilities), it is kept
        s = decoder.complete(TYPED, params)
        assert s.visible.startswith("hwaite") and decoder.answered == 1
    finally:
        decoder.lm.close()  # the model (a Decoder has no close of its own)
