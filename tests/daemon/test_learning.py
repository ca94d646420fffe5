"""What the memory learns (``learn``), where the controller keeps it: only
what the user typed or accepted in ordinary fields, and only text the model
was already asked about; never a password field's, a denylisted
application's or a no-echo terminal prompt's keys.

The real Controller with in-memory stand-ins for its ports (tests/daemon/fakes.py),
and the terminal over a real AT-SPI reader (tests/daemon/test_terminal_overlay.py).
"""

from __future__ import annotations

import dataclasses

from daemon.capture.events import Kind
from daemon.controller.ports import FocusState, Rect
from daemon.memory.learner import Learner
from daemon.memory.store import Memory
from tests.daemon.test_controller import EDITOR, Rig, key
from tests.daemon.test_privacy_rules import LOGIN, MANAGER, PASSWORD
from tests.daemon.test_terminal_overlay import SUDO, Rig as TerminalRig

MAIL = FocusState(app_id="thunderbird", window_id=3, field_id="body", is_password=False, text_before_caret="",
                 caret=Rect(10, 20, 2, 16))
NOTES = FocusState(app_id="gedit", window_id=4, field_id="doc", is_password=False, text_before_caret="",
                  caret=Rect(10, 20, 2, 16))
SECRET = "hunter2 correct horse"


def learning(rig) -> Memory:
    memory = Memory()
    rig.c.set_memory(memory)
    return memory


def everything(memory: Memory) -> str:
    return "\n".join(memory.pieces())


def test_what_was_typed_in_a_field_is_learned_when_the_focus_leaves_it():
    r = Rig(focus=EDITOR)
    memory = learning(r)
    r.type("Dear Dr. Quintanilla, thanks")
    assert memory.pieces() == ()  # not before the stretch ends
    r.focus.state = MAIL
    r.c.on_field_event()
    assert memory.pieces() == ("Dear Dr. Quintanilla, thanks",)


def test_only_the_typed_part_is_learned_not_what_the_field_held_before():
    quoted = FocusState(app_id="thunderbird", window_id=3, field_id="reply", is_password=False,
                        text_before_caret="> the quoted mail of somebody else\n", caret=Rect(10, 20, 2, 16))
    r = Rig(focus=quoted)
    memory = learning(r)
    r.type("Sounds good to me")
    r.focus.state = MAIL
    r.c.on_field_event()
    assert memory.pieces() == ("Sounds good to me",)


def test_accepted_suggestions_and_backspaces_count_and_the_lines_of_a_stretch_stay_together():
    r = Rig(focus=EDITOR)
    memory = learning(r)
    r.type("See you at the Kunstmuseum Winterthx")
    r.keys.on_key(key(Kind.BACKSPACE, "backspace"))
    r.type("ur")
    r.answer(" on Friday")
    r.tab()
    assert r.inj.typed == [" on Friday"]
    r.type("\nBest")
    assert memory.pieces() == ("See you at the Kunstmuseum Winterthur on Friday",)  # learned as the line ended
    r.type(", Mireille")
    r.focus.state = MAIL
    r.c.on_field_event()
    assert memory.pieces() == ("See you at the Kunstmuseum Winterthur on Friday\nBest, Mireille",)


def test_a_stretch_longer_than_the_buffer_is_learned_whole_line_by_line():
    r = Rig(focus=EDITOR, buffer_chars=100)
    memory = learning(r)
    lines = [f"    total_{i} = parse_row(line_{i}, width={i})" for i in range(12)]  # 497 characters
    r.type("\n".join(lines))
    r.c.close()
    assert memory.pieces() == ("\n".join(lines),)


def test_erasing_back_into_a_learned_line_leaves_it_and_the_corrected_line_begins_a_new_piece():
    r = Rig(focus=EDITOR)
    memory = learning(r)
    r.type("import numpy as nq\n")
    r.keys.on_key(key(Kind.BACKSPACE, "backspace"))  # the line end
    r.keys.on_key(key(Kind.BACKSPACE, "backspace"))  # and the q learned before it
    r.type("p\nimport pandas as pd")
    r.c.close()
    assert memory.pieces() == ("import numpy as nq", "import numpy as np\nimport pandas as pd")


def test_a_password_field_teaches_nothing():
    r = Rig(focus=LOGIN)
    memory = learning(r)
    r.type("alice@example.org")
    r.focus.state = PASSWORD
    r.c.on_field_event()
    r.type(SECRET)
    r.focus.state = LOGIN
    r.c.on_field_event()
    r.type(" and more")
    r.focus.state = MAIL
    r.c.on_field_event()
    assert SECRET not in everything(memory) and "hunter" not in everything(memory)
    assert memory.pieces() == ("alice@example.org",)


def test_a_denylisted_application_teaches_nothing():
    r = Rig(focus=MANAGER)
    memory = learning(r)
    r.type(SECRET)
    r.focus.state = MAIL
    r.c.on_field_event()
    r.type("plain words here")
    r.focus.state = NOTES
    r.c.on_field_event()
    assert "hunter" not in everything(memory)
    assert memory.pieces() == ("plain words here",)


def test_a_password_at_a_no_echo_terminal_prompt_teaches_nothing():
    r = TerminalRig()
    memory = learning(r)
    r.type("sudo apt update")
    r.enter(SUDO)
    r.type("hunter2", echo=False)
    r.enter("Sorry, try again.\n" + SUDO)
    r.type("hunter3", echo=False)
    r.c.on_focus()  # still the terminal
    r.enter("alice@host:~$ ")
    r.type("git status --short")
    r.enter("")
    assert "hunter" not in everything(memory)
    assert memory.pieces() == ("sudo apt update", "git status --short")


def test_leaving_a_no_echo_prompt_before_enter_teaches_nothing():
    """The password's keys are in the controller's buffer when the focus goes:
    they were never asked about, so the stretch holds nothing of them."""
    r = TerminalRig()
    memory = learning(r)
    r.type("ssh alice@build-host")
    r.enter("alice@build-host's password: ")
    r.type("hunter2xyz", echo=False)
    r.c.close()
    assert "hunter" not in everything(memory)


def test_learn_off_learns_nothing_and_the_stretch_so_far_is_dropped():
    r = Rig(focus=EDITOR)
    memory = learning(r)
    r.type("a stretch typed before learning was switched off")
    r.c.set_memory(None)
    r.focus.state = MAIL
    r.c.on_field_event()
    r.type("and one after it, also not learned")
    r.c.close()
    assert memory.pieces() == ()


def test_the_learner_keeps_only_what_the_model_was_asked_about():
    memory = Memory()
    learner = Learner(memory)
    learner.typed(len("private words"))  # typed, but never asked about
    assert not learner.flush() and memory.pieces() == ()
    learner.typed(len("field text"))
    learner.asked("earlier text of the field text")
    learner.typed(len(" and keys after the last ask"))
    assert learner.flush()
    assert memory.pieces() == ("field text",)


FIELD = FocusState(app_id="editor", window_id=1, field_id="doc", is_password=False, text_before_caret="",
                   caret=Rect(10, 20, 2, 16))


def test_a_name_typed_across_a_correction_from_the_field_is_learned_whole():
    """A key the listener missed on a busy machine: the buffer is taken from the field, and the stretch goes
    on (learned in two pieces, neither would know the name's end after its beginning)."""
    r = Rig(focus=FIELD)
    memory = learning(r)
    r.type("Please snd the invoice to Brunhilde Okonkwo-Va")
    r.focus.state = dataclasses.replace(FIELD, text_before_caret="Please send the invoice to Brunhilde Okonkwo-Va")
    r.answer("squez")  # shown only where the field agrees: it holds the missed letter, so the buffer is the field's
    assert r.c.tracker.text.startswith("Please send") and r.c.counters["field_corrections"] == 1
    r.type("squez today.")
    r.focus.state = MAIL
    r.c.on_field_event()
    assert memory.pieces() == ("Please send the invoice to Brunhilde Okonkwo-Vasquez today.",)


def test_a_field_behind_the_keys_does_not_split_the_stretch():
    memory = Memory()
    learner = Learner(memory)
    learner.typed(len("Dear Quillon Barthwaite"))
    learner.asked("Re: notes\nDear Quillon Barthwaite")
    assert not learner.resync("Re: notes\nDear Quill", "Re: notes\nDear Quillon Barthwaite")  # behind: goes on
    learner.typed(len("on Barthwaite-Oduya"))
    learner.asked("Re: notes\nDear Quillon Barthwaite-Oduya")
    assert learner.flush() and memory.pieces() == ("Dear Quillon Barthwaite-Oduya",)


def test_text_put_into_the_field_under_the_keys_ends_the_stretch_and_is_not_learned():
    r = Rig(focus=FIELD)
    memory = learning(r)
    r.type("Thanks for the")
    pasted = "Thanks for the minutes of the board meeting of 3 December, as forwarded by Ines"
    r.focus.state = dataclasses.replace(FIELD, text_before_caret=pasted)
    r.answer(" notes")
    assert r.c.tracker.text == pasted
    r.type(" below, with my comments")
    r.focus.state = MAIL
    r.c.on_field_event()
    assert "board meeting" not in everything(memory)
    assert memory.pieces() == ("Thanks for the", " below, with my comments")


def test_keys_the_listener_missed_or_the_application_dropped_do_not_split_the_stretch():
    for keys, field in [("lease send the invoice", "Please send the invoice"),  # the first key missed
                        ("Please snd the invoice", "Please send the invoice"),  # one in the middle
                        ("Please send thee invoice", "Please send the inv"),  # one dropped, the field behind
                        ]:
        memory = Memory()
        learner = Learner(memory)
        learner.typed(len(keys))
        learner.asked(keys)
        assert not learner.resync(field, keys), (keys, field)
        learner.typed(len(" today"))
        learner.asked(field + " today")
        assert learner.flush() and memory.pieces() == (field + " today",)
    learner = Learner(Memory())
    learner.typed(len("Please"))
    learner.asked("Please")
    assert learner.resync("Please find attached the minutes", "Please")  # more than missed keys: text from elsewhere


def test_a_line_longer_than_the_buffer_is_learned_whole_in_parts():
    r = Rig(focus=EDITOR, buffer_chars=100)
    memory = learning(r)
    sentence = " ".join(f"the {i}th clause of a paragraph that never ends" for i in range(10))  # 459 characters
    r.type(sentence)
    assert memory.pieces() and sentence.startswith(memory.pieces()[0])  # learned before the buffer let it go
    r.c.close()
    assert memory.pieces() == (sentence,)


def test_files_are_learned_as_a_stretch_that_typed_them():
    from daemon.memory.learner import learn_text
    from daemon.memory.store import MAX_PIECE_CHARS

    memory = Memory()
    code = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(400))  # 12,980 characters
    assert learn_text(memory, code) == len(code)
    assert "".join(memory.pieces()) == code and len(memory.pieces()) == 2
    assert all(len(p) <= MAX_PIECE_CHARS and p.startswith("\n") == (k > 0) for k, p in enumerate(memory.pieces()))
    r = Rig(focus=EDITOR)
    typed = learning(r)
    r.type(code[:600])
    r.c.close()
    small = Memory()
    learn_text(small, code[:600])
    assert typed.pieces() == small.pieces()
